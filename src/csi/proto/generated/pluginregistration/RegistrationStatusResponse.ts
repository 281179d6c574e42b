// Original file: src/csi/proto/pluginregistration.proto

export interface RegistrationStatusResponse {}

export interface RegistrationStatusResponse__Output {}
