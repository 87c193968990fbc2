/**
 * What a feature throws when a request breaks one of its rules. Features know nothing of HTTP;
 * the API's error writer turns each into its Stripe-style answer (400, 404, 409, 412).
 */

/** A value breaks a rule; `param` names it as the client sent it (e.g. `macros.calories`). */
export class InvalidInputError extends Error {
  constructor(
    readonly param: string,
    message: string,
  ) {
    super(message);
    this.name = 'InvalidInputError';
  }
}

/** The object exists but cannot be changed (a food of the shipped USDA table). */
export class ReadOnlyError extends Error {
  constructor(
    readonly param: string,
    message: string,
  ) {
    super(message);
    this.name = 'ReadOnlyError';
  }
}

/** A count limit on a resource (e.g. 50 webhook subscriptions). */
export class LimitExceededError extends Error {
  override name = 'LimitExceededError';
}

/** The object a request names does not exist. */
export class NotFoundError extends Error {
  constructor(
    readonly what: string,
    readonly id?: string,
  ) {
    super(id === undefined ? `No such ${what}.` : `No such ${what}: '${id}'.`);
    this.name = 'NotFoundError';
  }
}

/** The request is valid but clashes with the current state (an overlap, a disabled webhook). */
export class ConflictError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly param?: string,
  ) {
    super(message);
    this.name = 'ConflictError';
  }
}

/** A paging cursor (`starting_after`) that names no object of the list being paged. */
export class InvalidCursorError extends Error {
  constructor(
    readonly param: string,
    readonly cursor: string,
  ) {
    super(`No object with id '${cursor}' exists in this list to page from.`);
    this.name = 'InvalidCursorError';
  }
}

/**
 * A write made on condition that the object is still as the client last read it (If-Match), when
 * it has changed since: someone else's change would be lost.
 */
export class PreconditionFailedError extends Error {
  constructor(
    message: string,
    /** The object's entity tag now, so the client can tell what it would have to read again. */
    readonly currentETag: string,
  ) {
    super(message);
    this.name = 'PreconditionFailedError';
  }
}

/** Another system this request needs (the sync relay) could not be reached or refused; the sentence says which. */
export class UpstreamError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}
