// Original file: src/csi/proto/csi.proto

export interface _csi_v1_VolumeCapability_AccessMode {
  mode?: _csi_v1_VolumeCapability_AccessMode_Mode;
}

export interface _csi_v1_VolumeCapability_AccessMode__Output {
  mode: _csi_v1_VolumeCapability_AccessMode_Mode__Output;
}

export interface _csi_v1_VolumeCapability_BlockVolume {}

export interface _csi_v1_VolumeCapability_BlockVolume__Output {}

// Original file: src/csi/proto/csi.proto

export const _csi_v1_VolumeCapability_AccessMode_Mode = {
  UNKNOWN: 'UNKNOWN',
  SINGLE_NODE_WRITER: 'SINGLE_NODE_WRITER',
  SINGLE_NODE_READER_ONLY: 'SINGLE_NODE_READER_ONLY',
  MULTI_NODE_READER_ONLY: 'MULTI_NODE_READER_ONLY',
  MULTI_NODE_SINGLE_WRITER: 'MULTI_NODE_SINGLE_WRITER',
  MULTI_NODE_MULTI_WRITER: 'MULTI_NODE_MULTI_WRITER',
  SINGLE_NODE_SINGLE_WRITER: 'SINGLE_NODE_SINGLE_WRITER',
  SINGLE_NODE_MULTI_WRITER: 'SINGLE_NODE_MULTI_WRITER',
} as const;

export type _csi_v1_VolumeCapability_AccessMode_Mode =
  | 'UNKNOWN'
  | 0
  | 'SINGLE_NODE_WRITER'
  | 1
  | 'SINGLE_NODE_READER_ONLY'
  | 2
  | 'MULTI_NODE_READER_ONLY'
  | 3
  | 'MULTI_NODE_SINGLE_WRITER'
  | 4
  | 'MULTI_NODE_MULTI_WRITER'
  | 5
  | 'SINGLE_NODE_SINGLE_WRITER'
  | 6
  | 'SINGLE_NODE_MULTI_WRITER'
  | 7;

export type _csi_v1_VolumeCapability_AccessMode_Mode__Output =
  (typeof _csi_v1_VolumeCapability_AccessMode_Mode)[keyof typeof _csi_v1_VolumeCapability_AccessMode_Mode];

export interface _csi_v1_VolumeCapability_MountVolume {
  fsType?: string;
  mountFlags?: string[];
  volumeMountGroup?: string;
}

export interface _csi_v1_VolumeCapability_MountVolume__Output {
  fsType: string;
  mountFlags: string[];
  volumeMountGroup: string;
}

export interface VolumeCapability {
  block?: _csi_v1_VolumeCapability_BlockVolume | null;
  mount?: _csi_v1_VolumeCapability_MountVolume | null;
  accessMode?: _csi_v1_VolumeCapability_AccessMode | null;
  accessType?: 'block' | 'mount';
}

export interface VolumeCapability__Output {
  block?: _csi_v1_VolumeCapability_BlockVolume__Output | null;
  mount?: _csi_v1_VolumeCapability_MountVolume__Output | null;
  accessMode: _csi_v1_VolumeCapability_AccessMode__Output | null;
  accessType?: 'block' | 'mount';
}
