/**
 * Compaction is generic over the fold registry (src/state/fold.ts). Importing a domain's module
 * registers its fold; every domain whose log is checkpointed is imported here once. A log whose
 * fold is not registered is kept whole (never trimmed), so forgetting a line here costs size, not
 * state.
 */
import '../dispatch/logs/registry.js';
import '../dispatch/logs/school-log.js';
import '../dispatch/gates/spend.js';
import '../grading/queue.js';
import '../grading/ledger.js';
import '../outbox/outbox.js';
import '../feedback/log.js';
