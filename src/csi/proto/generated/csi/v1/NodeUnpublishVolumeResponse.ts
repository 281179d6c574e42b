// Original file: src/csi/proto/csi.proto

export interface NodeUnpublishVolumeResponse {}

export interface NodeUnpublishVolumeResponse__Output {}
