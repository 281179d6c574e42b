// Original file: src/csi/proto/csi.proto

export interface Topology {
  segments?: { [key: string]: string };
}

export interface Topology__Output {
  segments: { [key: string]: string };
}
