// Original file: src/node/runtime/proto/cri.proto

export interface ExecRequest {
  containerId?: string;
  cmd?: string[];
  tty?: boolean;
  stdin?: boolean;
  stdout?: boolean;
  stderr?: boolean;
}

export interface ExecRequest__Output {
  containerId: string;
  cmd: string[];
  tty: boolean;
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
}
