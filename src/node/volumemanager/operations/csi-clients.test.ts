import { describe, expect, it } from 'vitest';
import type { Logger } from '../../../util/log.js';
import { CsiClients, DriverNotRegisteredError } from './csi-clients.js';

describe('CSI clients of registered drivers', () => {
  it('an unregistered driver: a retryable DriverNotRegisteredError each time, said once until it registers', () => {
    const infos: string[] = [];
    const log: Logger = {
      debug: () => undefined,
      info: (m, f) => infos.push(`${m} ${String(f?.driver)}`),
      warn: () => undefined,
      error: () => undefined,
      child: () => log,
    };
    let endpoint: string | undefined;
    const clients = new CsiClients({ endpoint: () => endpoint }, log);
    for (let i = 0; i < 5; i++) {
      const get = (): unknown => clients.get('d.example.com');
      expect(get).toThrow(DriverNotRegisteredError);
      expect(get).toThrow('driver name d.example.com not found in the list of registered CSI drivers');
    }
    expect(infos).toHaveLength(1);
    expect(infos[0]).toContain('d.example.com');
    endpoint = '/tmp/none/csi.sock';
    clients.get('d.example.com');
    endpoint = undefined;
    expect(() => clients.get('d.example.com')).toThrow(DriverNotRegisteredError);
    expect(infos).toHaveLength(2); // gone again after registering: said again
    clients.close();
  });
});
