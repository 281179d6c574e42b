// Original file: src/csi/proto/csi.proto

export interface ListVolumesRequest {
  maxEntries?: number;
  startingToken?: string;
}

export interface ListVolumesRequest__Output {
  maxEntries: number;
  startingToken: string;
}
