/**
 * Registers the phone app's service worker (sw.ts, built to `sw.js` beside the page) and offers a
 * new version when one is waiting: "A new version is ready — Reload". The new worker takes over
 * only when the person presses Reload (then the page reloads onto the new files), so a running
 * page never has its files swapped underneath it.
 *
 * Relative URLs throughout: the page is at / in the tests and at /app/ on the relay, and the
 * worker's scope is the page's folder either way.
 */
import { isErased } from './erased';
import './sw-prompt.css';

const PROMPT_ID = 'update-prompt';

/** Shows the prompt once; pressing Reload asks the waiting worker to take over. */
function offer(waiting: ServiceWorker): void {
  if (document.getElementById(PROMPT_ID)) return;
  const prompt = document.createElement('aside');
  prompt.id = PROMPT_ID;
  prompt.className = 'update-prompt';
  prompt.setAttribute('aria-label', 'Update');
  const text = document.createElement('p');
  text.setAttribute('role', 'status');
  text.textContent = 'A new version is ready';
  const reload = document.createElement('button');
  reload.type = 'button';
  reload.className = 'btn btn--small btn--primary';
  reload.textContent = 'Reload';
  reload.addEventListener('click', () => {
    reload.disabled = true;
    waiting.postMessage({ type: 'skip-waiting' });
  });
  prompt.append(text, reload);
  // First in the page, so it is the first stop of the keyboard.
  document.body.prepend(prompt);
}

/** Offers `worker` once it has installed (it then waits, as a page still runs the old one). */
function offerWhenInstalled(worker: ServiceWorker): void {
  const check = () => {
    if (worker.state === 'installed') offer(worker);
  };
  worker.addEventListener('statechange', check);
  check();
}

export async function registerServiceWorker(): Promise<void> {
  // A forgotten phone does not download the app again until the person sets it up again.
  if (!('serviceWorker' in navigator) || !window.isSecureContext || isErased()) return;
  const container = navigator.serviceWorker;
  // No controller: the first install, which takes this page without a reload (sw.ts, activate).
  // With one, a change of controller means a new version took over: this page's files are the old ones.
  if (container.controller) {
    let reloading = false;
    container.addEventListener('controllerchange', () => {
      if (reloading) return;
      reloading = true;
      location.reload();
    });
  }
  const registration = await container.register('./sw.js', { scope: './' });
  if (registration.waiting && container.controller) offer(registration.waiting);
  registration.addEventListener('updatefound', () => {
    const installing = registration.installing;
    if (installing && container.controller) offerWhenInstalled(installing);
  });
  // An app left open for days looks for a new version whenever it comes back to the screen.
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') registration.update().catch(() => {});
  });
}

/**
 * "Forget this phone" (PHONE-PEER.md criterion 21): the app's offline copy goes too, so that what
 * the origin keeps is what a first visit would. The worker is unregistered as well as its caches
 * deleted: a worker left without its cache would never fill it again, and the app would no longer
 * open offline; unregistered, the next page load installs it afresh.
 */
export async function forgetServiceWorker(): Promise<void> {
  if ('serviceWorker' in navigator) for (const registration of await navigator.serviceWorker.getRegistrations()) await registration.unregister();
  // Every cache of the origin: the relay's origin serves only this app.
  if ('caches' in window) for (const name of await caches.keys()) await caches.delete(name);
}
