/**
 * The mqtt package, for client.ts to import() once a broker is set: the client and its packages
 * are ~850 KB of JavaScript that every start would otherwise compile (docs/performance.md, "Cold
 * start"). Through this module rather than import('mqtt') itself: the CLI bundle makes a lazily
 * imported CommonJS package a chunk whose only export is `default`, where a static import here
 * keeps the package's named exports.
 */
export { connect, MqttClient } from 'mqtt';
