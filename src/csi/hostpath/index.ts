export {
  runHostpathDriver,
  startHostpathDriver,
  parseEndpoint,
  type HostpathDriverOptions,
  type RunningHostpathDriver,
} from './server.js';
export { DEFAULT_DRIVER_NAME, TOPOLOGY_KEY, type HostpathConfig } from './driver.js';
