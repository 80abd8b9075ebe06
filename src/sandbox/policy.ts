/**
 * What a sandbox enforces, said in the sandbox's own words: everything it needs from school.yml
 * and from the caller's layout, and nothing else. The sandbox never reads the configuration;
 * its callers build a Policy (src/config/sandbox-policy.ts `policyFrom`) and hand it in.
 *
 * What a Policy does not hold, because it differs per process or per agent, is given to the call
 * that needs it: the `host:port` pairs one process may reach and its mounts (`confine`), and the
 * upstream, key and meter of a key proxy (`keyProxy`).
 */
export interface Policy {
  /** bwrap confines; none runs every process as given (only when school.yml says so). */
  kind: 'bwrap' | 'none';
  /** The bubblewrap binary: a name on the host's PATH or an absolute path. */
  bwrap: string;
  /** allow-list: only the per-process allow-list, through the egress proxy; none: no network; host: no limit. */
  network: 'allow-list' | 'none' | 'host';
  /** Extra absolute paths every confined process sees read-only (a toolchain outside /usr). */
  readOnly: readonly string[];
  /**
   * Paths that never become visible, whatever PATH names (the state directory, the checkout, the
   * other slots); the host HOME, the toolkit and the runner's directories are added by the sandbox.
   */
  protect: readonly string[];
  limits: LimitsPolicy;
}

/** What one sandbox (all its processes together) may take of the machine (./limits.ts). */
export interface LimitsPolicy {
  /** Tasks at once (cgroup pids.max). */
  pids: number;
  /** Memory of all its processes, tmpfs files included (cgroup memory.max). */
  memoryMiB: number;
  /** CPU share against the other sandboxes (cgroup cpu.weight). */
  cpuWeight: number;
  /** Size of each writable tmpfs inside. */
  tmpfsMiB: number;
  /** The largest file a process may write (RLIMIT_FSIZE) and the size of its /tmp. */
  diskMiB: number;
}
