/** The package's public surface: the embeddable service and the receiver-side signature check. */
export { createService, type Service, type ServiceOptions } from './service.js';
export { ManualClock, systemClock, type Clock } from './clock.js';
