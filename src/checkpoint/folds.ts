/**
 * Compaction is generic over the fold registry (src/state/fold.ts). Importing a domain's module
 * registers its fold; every domain whose log is checkpointed is imported here once.
 */
import '../dispatch/registry.js';
