import { describe, expect, it } from 'vitest';
import { deletableResources, preferredGroupVersions } from './discovery.js';

describe('discovery of deletable resources', () => {
  it('keeps top-level resources with list, watch and delete', () => {
    const list = {
      resources: [
        { name: 'pods', kind: 'Pod', namespaced: true, verbs: ['create', 'delete', 'get', 'list', 'watch'] },
        { name: 'pods/status', kind: 'Pod', namespaced: true, verbs: ['get', 'patch', 'update'] },
        { name: 'bindings', kind: 'Binding', namespaced: true, verbs: ['create'] },
        { name: 'nodes', kind: 'Node', namespaced: false, verbs: ['delete', 'list', 'watch'] },
        { name: 'broken', verbs: ['delete', 'list', 'watch'] },
      ],
    };
    expect(deletableResources(list, '', 'v1')).toEqual([
      { group: '', version: 'v1', plural: 'pods', namespaced: true, kind: 'Pod' },
      { group: '', version: 'v1', plural: 'nodes', namespaced: false, kind: 'Node' },
    ]);
  });
  it('reads each group at its preferred version', () => {
    const groups = {
      groups: [
        {
          name: 'storage.k8s.io',
          versions: [],
          preferredVersion: { groupVersion: 'storage.k8s.io/v1', version: 'v1' },
        },
        { name: 'bad' },
      ],
    };
    expect(preferredGroupVersions(groups)).toEqual([{ group: 'storage.k8s.io', version: 'v1' }]);
  });
});
