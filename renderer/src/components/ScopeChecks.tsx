import type { Dispatch, SetStateAction } from 'react';
import { SCOPE_DESCRIPTIONS, type Scope } from '../api/types';

/** The scopes a new key gets, as checkboxes with what each allows (API keys, AI assistants). */
export function ScopeChecks(props: {
  legend: string;
  offered: readonly Scope[];
  scopes: Scope[];
  setScopes: Dispatch<SetStateAction<Scope[]>>;
  error: string | undefined;
}) {
  const { legend, offered, scopes, setScopes, error } = props;
  return (
    <fieldset className={`checks ${error ? 'field--invalid' : ''}`}>
      <legend>{legend}</legend>
      {offered.map((scope) => (
        <label key={scope} className="check">
          <input
            type="checkbox"
            checked={scopes.includes(scope)}
            onChange={(e) => setScopes((cur) => (e.target.checked ? [...cur, scope] : cur.filter((x) => x !== scope)))}
          />
          <span>
            <code>{scope}</code> <span className="muted">{SCOPE_DESCRIPTIONS[scope]}</span>
          </span>
        </label>
      ))}
      {error ? (
        <p className="field__error" role="alert">
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}
