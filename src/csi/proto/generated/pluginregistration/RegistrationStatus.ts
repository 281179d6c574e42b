// Original file: src/csi/proto/pluginregistration.proto

export interface RegistrationStatus {
  pluginRegistered?: boolean;
  error?: string;
}

export interface RegistrationStatus__Output {
  pluginRegistered: boolean;
  error: string;
}
