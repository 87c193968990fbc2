import { startTransition, useContext, useId, useState, type ReactNode } from 'react';
import { ApiError, errorMessage } from '../api/client';
import type { Resource } from '../lib/hooks';
import { AppContext } from '../lib/app';
import './ui.css';

/** A labelled control with its hint and its inline error (announced, and tied by aria-describedby). */
export function Field(props: {
  label: ReactNode;
  error?: string | undefined;
  hint?: ReactNode;
  className?: string;
  /** Keep the label for assistive technology only (a visible column header says it). */
  hideLabel?: boolean;
  children: (ids: { id: string; describedBy: string | undefined; invalid: boolean }) => ReactNode;
}) {
  const id = useId();
  const hintId = props.hint ? `${id}-hint` : undefined;
  const errId = props.error ? `${id}-err` : undefined;
  const describedBy = [errId, hintId].filter(Boolean).join(' ') || undefined;
  return (
    <div className={`field ${props.error ? 'field--invalid' : ''} ${props.className ?? ''}`}>
      <label htmlFor={id} className={props.hideLabel ? 'visually-hidden' : undefined}>
        {props.label}
      </label>
      {props.children({ id, describedBy, invalid: Boolean(props.error) })}
      {props.hint && !props.error ? (
        <p className="field__hint" id={hintId}>
          {props.hint}
        </p>
      ) : null}
      {props.error ? (
        <p className="field__error" id={errId} role="alert">
          {props.error}
        </p>
      ) : null}
    </div>
  );
}

/** Errors from the API keyed by `param` ("macros.calories", "foods.0.calories"); "" for the form. */
export type FieldErrors = Record<string, string>;

export function toFieldErrors(err: unknown, known: (param: string) => boolean = () => true): FieldErrors {
  if (err instanceof ApiError && err.param && known(err.param)) return { [err.param]: err.message };
  return { '': errorMessage(err) };
}

/**
 * The state every form that sends to the API keeps: `busy` while a send is in flight, and the
 * errors to show by field. `send` runs the request; on success the errors clear, and an API error
 * lands under the field its `param` names when `known` accepts it, else above the form.
 */
/** Clearing errors that are already clear keeps the same object: nothing renders again for it. */
export const noErrors = (errors: FieldErrors): FieldErrors => (Object.keys(errors).length ? {} : errors);

export function useApiForm(known: (param: string) => boolean) {
  const [errors, setErrors] = useState<FieldErrors>({});
  const [busy, setBusy] = useState(false);
  const app = useContext(AppContext);
  async function send(action: () => Promise<void>): Promise<void> {
    setBusy(true);
    try {
      await action();
    } catch (err) {
      // One message at a time: a toast still saying the last attempt worked ("Sleep logged") would
      // sit beside this attempt's error.
      app?.dismissToast();
      setErrors(toFieldErrors(err, known));
      setBusy(false);
      return;
    }
    // Done: the form is free again in the same render as what the action changed in a transition
    // (a logged meal's form cleared), never before it, and after the action's note is on screen.
    startTransition(() => {
      setErrors(noErrors);
      setBusy(false);
    });
  }
  return { errors, setErrors, busy, send };
}

/** The form's own error (one no field owns); `id` lets the form point at it with aria-describedby. */
export function FormError({ errors, id }: { errors: FieldErrors; id?: string }) {
  if (!errors['']) return null;
  return (
    <p className="form-error" role="alert" id={id}>
      {errors['']}
    </p>
  );
}

export function ScreenHead({ title, subtitle, children }: { title: string; subtitle?: string; children?: ReactNode }) {
  return (
    <header className="screen__head">
      <div>
        <h1>{title}</h1>
        {subtitle ? <p className="screen__sub">{subtitle}</p> : null}
      </div>
      {children ? <div className="screen__tools">{children}</div> : null}
    </header>
  );
}

export function Card(props: { title?: ReactNode; actions?: ReactNode; className?: string; children: ReactNode }) {
  const id = useId();
  return (
    <section className={`card ${props.className ?? ''}`} aria-labelledby={props.title ? id : undefined}>
      {props.title || props.actions ? (
        <header className="card__head">
          {props.title ? <h2 id={id}>{props.title}</h2> : <span />}
          {props.actions ? <div className="card__actions">{props.actions}</div> : null}
        </header>
      ) : null}
      {props.children}
    </section>
  );
}

/** A row of mutually exclusive choices (radio semantics, arrow keys move between them). */
export function Segmented<T extends string>(props: {
  label: string;
  value: T;
  options: readonly { value: T; label: ReactNode }[];
  onChange: (v: T) => void;
  hideLabel?: boolean;
  name?: string;
}) {
  const name = useId();
  return (
    <fieldset className="segmented">
      <legend className={props.hideLabel ? 'visually-hidden' : 'segmented__legend'}>{props.label}</legend>
      <div className="segmented__track">
        {props.options.map((o) => (
          <label key={o.value} className={`segmented__opt ${o.value === props.value ? 'is-on' : ''}`}>
            <input
              type="radio"
              name={props.name ?? name}
              value={o.value}
              checked={o.value === props.value}
              onChange={() => props.onChange(o.value)}
            />
            <span>{o.label}</span>
          </label>
        ))}
      </div>
    </fieldset>
  );
}

export function Loading({ label = 'Loading' }: { label?: string }) {
  return (
    <div className="loading" role="status">
      <span className="loading__dot" aria-hidden="true" />
      <span>{label}…</span>
    </div>
  );
}

export function ErrorNote({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  return (
    <div className="error-note" role="alert">
      <p>{errorMessage(error)}</p>
      {onRetry ? (
        <button type="button" className="btn btn--small" onClick={onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

/** What a resource shows besides its data: its error with a retry, or the loading note until it has data. */
export function ResourceStatus({ resource }: { resource: Resource<unknown> }) {
  if (resource.error) return <ErrorNote error={resource.error} onRetry={resource.reload} />;
  return !resource.data ? <Loading /> : null;
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}

export function Chip({ tone, children }: { tone?: string; children: ReactNode }) {
  return <span className={`chip ${tone ? `chip--${tone}` : ''}`}>{children}</span>;
}

/** Tiny stroked icons (24×24 viewBox), decorative: callers label their buttons. */
export function Icon({ name, size = 18 }: { name: keyof typeof ICONS; size?: number }) {
  return (
    <svg
      className="icon"
      width={size}
      height={size}
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      strokeWidth={1.7}
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
      focusable="false"
    >
      {ICONS[name]}
    </svg>
  );
}

const ICONS = {
  today: (
    <>
      <circle cx="12" cy="12" r="8.5" />
      <path d="M12 7v5l3 2" />
    </>
  ),
  log: (
    <>
      <path d="M12 5v14M5 12h14" />
    </>
  ),
  score: (
    <>
      <path d="M4 19V5M4 19h16" />
      <path d="M7 15l4-4 3 3 5-6" />
    </>
  ),
  timeline: (
    <>
      <path d="M4 7h9M7 12h11M5 17h7" />
    </>
  ),
  plug: (
    <>
      <path d="M9 3v5M15 3v5M7 8h10v3a5 5 0 0 1-10 0V8zM12 16v5" />
    </>
  ),
  sun: (
    <>
      <circle cx="12" cy="12" r="4" />
      <path d="M12 2.5v2M12 19.5v2M4.9 4.9l1.4 1.4M17.7 17.7l1.4 1.4M2.5 12h2M19.5 12h2M4.9 19.1l1.4-1.4M17.7 6.3l1.4-1.4" />
    </>
  ),
  moon: <path d="M20 14.5A8 8 0 0 1 9.5 4a8 8 0 1 0 10.5 10.5z" />,
  monitor: (
    <>
      <rect x="3" y="4" width="18" height="12" rx="2" />
      <path d="M8 20h8M12 16v4" />
    </>
  ),
  star: <path d="M12 3.5l2.6 5.3 5.8.8-4.2 4.1 1 5.8L12 16.8l-5.2 2.7 1-5.8-4.2-4.1 5.8-.8z" />,
  copy: (
    <>
      <rect x="8" y="8" width="12" height="12" rx="2" />
      <path d="M16 8V6a2 2 0 0 0-2-2H6a2 2 0 0 0-2 2v8a2 2 0 0 0 2 2h2" />
    </>
  ),
  edit: <path d="M4 20h4L19 9l-4-4L4 16v4zM13.5 6.5l4 4" />,
  trash: <path d="M4 7h16M10 11v6M14 11v6M6 7l1 13h10l1-13M9 7V4h6v3" />,
  repeat: (
    <>
      <path d="M17 2l3 3-3 3" />
      <path d="M4 11V9a4 4 0 0 1 4-4h12M7 22l-3-3 3-3" />
      <path d="M20 13v2a4 4 0 0 1-4 4H4" />
    </>
  ),
  close: <path d="M6 6l12 12M18 6L6 18" />,
  chevronLeft: <path d="M15 5l-7 7 7 7" />,
  chevronRight: <path d="M9 5l7 7-7 7" />,
  download: <path d="M12 4v11M7 10l5 5 5-5M5 20h14" />,
  upload: <path d="M12 20V9M7 14l5-5 5 5M5 4h14" />,
} satisfies Record<string, ReactNode>;

/** The options of a time-zone select: IANA names, shown with spaces for underscores. */
export function TimeZoneOptions({ zones }: { zones: readonly string[] }) {
  return (
    <>
      {zones.map((z) => (
        <option key={z} value={z}>
          {z.replace(/_/g, ' ')}
        </option>
      ))}
    </>
  );
}
