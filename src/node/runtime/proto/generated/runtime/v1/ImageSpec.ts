// Original file: src/node/runtime/proto/cri.proto

export interface ImageSpec {
  image?: string;
  annotations?: { [key: string]: string };
  userSpecifiedImage?: string;
}

export interface ImageSpec__Output {
  image: string;
  annotations: { [key: string]: string };
  userSpecifiedImage: string;
}
