// Original file: src/csi/proto/csi.proto

export interface _csi_v1_ControllerServiceCapability_RPC {
  type?: _csi_v1_ControllerServiceCapability_RPC_Type;
}

export interface _csi_v1_ControllerServiceCapability_RPC__Output {
  type: _csi_v1_ControllerServiceCapability_RPC_Type__Output;
}

// Original file: src/csi/proto/csi.proto

export const _csi_v1_ControllerServiceCapability_RPC_Type = {
  UNKNOWN: 'UNKNOWN',
  CREATE_DELETE_VOLUME: 'CREATE_DELETE_VOLUME',
  PUBLISH_UNPUBLISH_VOLUME: 'PUBLISH_UNPUBLISH_VOLUME',
  LIST_VOLUMES: 'LIST_VOLUMES',
  GET_CAPACITY: 'GET_CAPACITY',
  CREATE_DELETE_SNAPSHOT: 'CREATE_DELETE_SNAPSHOT',
  LIST_SNAPSHOTS: 'LIST_SNAPSHOTS',
  CLONE_VOLUME: 'CLONE_VOLUME',
  PUBLISH_READONLY: 'PUBLISH_READONLY',
  EXPAND_VOLUME: 'EXPAND_VOLUME',
  LIST_VOLUMES_PUBLISHED_NODES: 'LIST_VOLUMES_PUBLISHED_NODES',
  VOLUME_CONDITION: 'VOLUME_CONDITION',
  GET_VOLUME: 'GET_VOLUME',
  SINGLE_NODE_MULTI_WRITER: 'SINGLE_NODE_MULTI_WRITER',
  MODIFY_VOLUME: 'MODIFY_VOLUME',
  GET_SNAPSHOT: 'GET_SNAPSHOT',
} as const;

export type _csi_v1_ControllerServiceCapability_RPC_Type =
  | 'UNKNOWN'
  | 0
  | 'CREATE_DELETE_VOLUME'
  | 1
  | 'PUBLISH_UNPUBLISH_VOLUME'
  | 2
  | 'LIST_VOLUMES'
  | 3
  | 'GET_CAPACITY'
  | 4
  | 'CREATE_DELETE_SNAPSHOT'
  | 5
  | 'LIST_SNAPSHOTS'
  | 6
  | 'CLONE_VOLUME'
  | 7
  | 'PUBLISH_READONLY'
  | 8
  | 'EXPAND_VOLUME'
  | 9
  | 'LIST_VOLUMES_PUBLISHED_NODES'
  | 10
  | 'VOLUME_CONDITION'
  | 11
  | 'GET_VOLUME'
  | 12
  | 'SINGLE_NODE_MULTI_WRITER'
  | 13
  | 'MODIFY_VOLUME'
  | 14
  | 'GET_SNAPSHOT'
  | 15;

export type _csi_v1_ControllerServiceCapability_RPC_Type__Output =
  (typeof _csi_v1_ControllerServiceCapability_RPC_Type)[keyof typeof _csi_v1_ControllerServiceCapability_RPC_Type];

export interface ControllerServiceCapability {
  rpc?: _csi_v1_ControllerServiceCapability_RPC | null;
  type?: 'rpc';
}

export interface ControllerServiceCapability__Output {
  rpc?: _csi_v1_ControllerServiceCapability_RPC__Output | null;
  type?: 'rpc';
}
