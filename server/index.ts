/** The package's public surface: the embeddable service and the receiver-side signature check. */
export { createService, type Service, type ServiceOptions } from './service.js';
export { ManualClock, systemClock, type Clock } from './clock.js';
export {
  verifySignature,
  checkSignature,
  DEFAULT_TOLERANCE_SEC,
  type VerifyOptions,
  type VerifyResult,
  type VerifyFailure,
} from './webhooks/verify.js';
export { signatureHeader, computeSignature, SIGNATURE_HEADER } from './webhooks/sign.js';
