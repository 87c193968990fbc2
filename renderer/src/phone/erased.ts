/**
 * After "Forget this phone" the app stays erased until the person sets it up again: the page
 * shows "Chyme is erased from this phone" with a "Set up again" button, in place of the app, at
 * once (it needs no network, so Forget works offline too) and on every later visit. Until then it
 * starts no worker (no database is created) and registers no service worker (the offline copy is
 * not downloaded again), so a forgotten phone keeps nothing of Chyme's but the one mark that says
 * so (a few bytes of localStorage). "Set up again", or opening a pairing link (`#pair=`, the
 * desktop's QR code scanned again), removes the mark and the app starts as on a first visit.
 */

const ERASED_KEY = 'chyme.erased';

/** What the page does to leave the app for the erased view: unmount it and stop its worker (main.tsx). */
let leaveApp: () => void = () => {};
export function onErase(leave: () => void): void {
  leaveApp = leave;
}

/** Whether the app is erased (the mark is there). */
export function isErased(): boolean {
  try {
    return localStorage.getItem(ERASED_KEY) !== null;
  } catch {
    return false;
  }
}

/** Whether this load shows the erased view: a pairing link starts again, as "Set up again" does. */
export function staysErased(): boolean {
  if (!isErased()) return false;
  if (!location.hash.startsWith('#pair=')) return true;
  localStorage.removeItem(ERASED_KEY);
  return false;
}

/**
 * The phone's database and offline copy are gone (PhoneSync's Forget): clears what the page itself
 * kept (localStorage: the theme and other preferences of this device), marks the app erased, leaves
 * the app and shows the erased view.
 */
export function erased(): void {
  localStorage.clear();
  localStorage.setItem(ERASED_KEY, new Date().toISOString());
  leaveApp();
  showErased();
}

/** The erased view, in the page's own status area (phone.html's `#phone-status`), outside the app. */
export function showErased(): void {
  const main = document.getElementById('phone-status')!;
  const heading = document.createElement('h1');
  heading.textContent = 'Chyme';
  heading.tabIndex = -1;
  const status = document.createElement('p');
  status.id = 'status';
  status.setAttribute('role', 'status');
  status.textContent = 'Chyme is erased from this phone.';
  const note = document.createElement('p');
  note.textContent = 'Your history stays on your computers. This phone keeps nothing of it, and does not download the app again, until you set it up again.';
  const again = document.createElement('button');
  again.type = 'button';
  again.className = 'btn btn--primary';
  again.textContent = 'Set up again';
  again.addEventListener('click', () => {
    localStorage.removeItem(ERASED_KEY);
    location.replace(location.pathname);
  });
  main.replaceChildren(heading, status, note, again);
  main.hidden = false;
  main.dataset.state = 'erased';
  heading.focus();
}
