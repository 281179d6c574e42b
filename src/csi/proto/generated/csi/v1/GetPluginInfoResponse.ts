// Original file: src/csi/proto/csi.proto

export interface GetPluginInfoResponse {
  name?: string;
  vendorVersion?: string;
  manifest?: { [key: string]: string };
}

export interface GetPluginInfoResponse__Output {
  name: string;
  vendorVersion: string;
  manifest: { [key: string]: string };
}
