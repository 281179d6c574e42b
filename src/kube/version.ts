/**
 * The Kubernetes release Stowage reports, and the User-Agents its components send, in client-go's
 * shape: kube-apiserver names the field manager of a write after the User-Agent's part before the
 * first '/', so these decide the managers shown in managedFields.
 */

/** The version /version reports; kubectl's dispatcher picks its minor from it. */
export const KUBE_VERSION = { major: '1', minor: '30', gitVersion: 'v1.30.14' } as const;

/** The gitCommit /version reports (client-go's user agent carries its first 7 characters). */
export const GIT_COMMIT = 'stowage';

/** GOOS/GOARCH of this process, as Go names them. */
export const PLATFORM = `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch === 'ia32' ? '386' : process.arch}`;

/** The commands whose names Kubernetes' components send; each is the field manager of its writes. */
export const COMPONENTS = {
  controllerManager: 'kube-controller-manager',
  scheduler: 'kube-scheduler',
  kubelet: 'kubelet',
  // The CSI sidecars send client-go's default (their binary's name) with no driver appended.
  provisioner: 'csi-provisioner',
  attacher: 'csi-attacher',
  resizer: 'csi-resizer',
} as const;

/**
 * client-go's rest.DefaultKubernetesUserAgent for `command`, e.g.
 * `kubelet/v1.30.14 (linux/amd64) kubernetes/stowage`; with `suffix`, rest.AddUserAgent's
 * `/<suffix>` (kube-controller-manager appends each controller's service account that way).
 */
export function componentUserAgent(command: string, suffix?: string): string {
  const base = `${command}/${KUBE_VERSION.gitVersion} (${PLATFORM}) kubernetes/${GIT_COMMIT.slice(0, 7)}`;
  return suffix ? `${base}/${suffix}` : base;
}
