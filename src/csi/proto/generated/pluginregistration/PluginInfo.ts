// Original file: src/csi/proto/pluginregistration.proto

export interface PluginInfo {
  type?: string;
  name?: string;
  endpoint?: string;
  supportedVersions?: string[];
}

export interface PluginInfo__Output {
  type: string;
  name: string;
  endpoint: string;
  supportedVersions: string[];
}
