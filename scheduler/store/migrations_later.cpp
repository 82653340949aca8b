// Schema versions 21 on (migrations.h); versions 1 to 20 are in migrations.cpp. Append here.
#include "scheduler/store/migrations.h"

namespace orch {

// function-length: table (one entry per schema version)
std::vector<Migration> later_migrations() {
  return {
      {21,
       "GPUs of each node that jobs hold as its site reports them, every tenant's: placement "
       "counts those beyond orchestrate's own attempts as taken",
       R"sql(
ALTER TABLE nodes ADD COLUMN gpus_busy INTEGER NOT NULL DEFAULT 0;
)sql"},
      {22,
       "placing a job writes less: the GPUs live attempts hold are read from one index alone; "
       "the index of every attempt by cluster and state is gone (the partial ones of live and "
       "unsettled attempts serve its reads), and attempts enter the index of end times when "
       "they end; the store copies webhook notices as it writes events, not triggers",
       // Placement reads the GPUs in use after every capacity change: with the columns it sums
       // in the index, that read costs what the live attempts are, never the attempts' table.
       // A trigger runs as a program of its own for every row, its WHEN clause inside it: the
       // notice triggers made writing any event twice as costly, though few events are notices
       // (Store::add_event and add_node_event copy those, with the same kinds).
       R"sql(
DROP INDEX attempts_unsettled;
CREATE INDEX attempts_unsettled ON attempts(cluster, state, gpus, site_done)
  WHERE state != 'exited' OR site_done = 0;
DROP INDEX attempts_live;
DROP INDEX attempts_ended;
CREATE INDEX attempts_ended ON attempts(ended_ms) WHERE ended_ms IS NOT NULL;
DROP TRIGGER notice_of_event;
DROP TRIGGER notice_of_node_event;
)sql"},
      {23,
       "the quarantined nodes of a cluster, and the checkpoint copies that still exist, are "
       "read from indexes of their own: the brain looks for nodes due a release probe, and "
       "for what to replicate or delete, on every tick, which read every node and every "
       "checkpoint a job ever saved before",
       R"sql(
CREATE INDEX nodes_quarantined ON nodes(cluster, name) WHERE state = 'quarantined';
CREATE INDEX replicas_live ON replicas(checkpoint_id)
  WHERE checkpoint_id IS NOT NULL AND state NOT IN ('deleted', 'missing');
)sql"},
      {24,
       "an attempt's node count as a column (its nodes are now kept as a host list, "
       "\"gamma-[0001-2048]\", rather than a JSON array the scorecard counted); the "
       "attempts a site worker watches and the copies the audit checks, from indexes of "
       "their own rather than every attempt and copy ever made",
       R"sql(
ALTER TABLE attempts ADD COLUMN node_count INTEGER NOT NULL DEFAULT 0;
UPDATE attempts SET node_count = json_array_length(nodes)
  WHERE json_valid(nodes) AND json_array_length(nodes) > 0;
CREATE INDEX attempts_site_open ON attempts(cluster) WHERE site_done = 0;
CREATE INDEX replicas_not_deleted ON replicas(cluster) WHERE state <> 'deleted';
)sql"},
      {25,
       "each attempt's own checkpoint directory, and the directory each checkpoint copy must "
       "lie in at its site: a path a job reports outside its directory is never registered, "
       "and a copy that resolves outside its directory is never listed, copied or deleted "
       "(issue 37); rows written before are confined to what their cluster's checkpoint root "
       "gives their job",
       R"sql(
ALTER TABLE attempts ADD COLUMN checkpoint_dir TEXT NOT NULL DEFAULT '';
ALTER TABLE replicas ADD COLUMN confined_to TEXT NOT NULL DEFAULT '';
)sql"},
      {26,
       "where each second of a recovery goes (issue 38): when the restart policy let an "
       "attempt start (the end of its backoff) and when its first progress line came, so that "
       "detection, backoff, placing, the site's queue and the job's own start are shown apart",
       R"sql(
ALTER TABLE attempts ADD COLUMN due_ms INTEGER;
ALTER TABLE attempts ADD COLUMN first_progress_ms INTEGER;
)sql"},
      {27,
       "tiered checkpoints (issue 38): a copy may lie on one node's own disk (the node it names) "
       "beside the copy on the site's shared storage, so a checkpoint has at most one copy per "
       "cluster and node",
       R"sql(
ALTER TABLE replicas ADD COLUMN node TEXT NOT NULL DEFAULT '';
DROP INDEX replicas_of_checkpoint;
CREATE UNIQUE INDEX replicas_of_checkpoint ON replicas(checkpoint_id, cluster, node)
  WHERE checkpoint_id IS NOT NULL;
CREATE INDEX replicas_on_node ON replicas(cluster, node) WHERE node <> '';
)sql"},
      {28,
       "hot spares (issue 38): nodes each cluster keeps burned in and held idle for a gang that "
       "loses a node (the live ones indexed), and their running totals of cost and outcomes",
       R"sql(
CREATE TABLE spares (
  id INTEGER PRIMARY KEY,
  cluster TEXT NOT NULL,
  node TEXT NOT NULL,
  token TEXT NOT NULL UNIQUE,
  state TEXT NOT NULL,
  gpus INTEGER NOT NULL DEFAULT 0,
  created_ms INTEGER NOT NULL,
  held_ms INTEGER,
  ready_ms INTEGER,
  ended_ms INTEGER,
  reason TEXT NOT NULL DEFAULT '',
  taken_by INTEGER
);
CREATE INDEX spares_live ON spares(cluster, node)
  WHERE state IN ('burning_in', 'holding', 'ready');
CREATE TABLE spare_totals (
  cluster TEXT PRIMARY KEY,
  gpu_ms INTEGER NOT NULL DEFAULT 0,
  taken INTEGER NOT NULL DEFAULT 0,
  failed INTEGER NOT NULL DEFAULT 0,
  lost INTEGER NOT NULL DEFAULT 0
);
)sql"},
      {29, "each node's CPUs and memory as its site reports them (issue 40: job shapes)",
       "ALTER TABLE nodes ADD COLUMN cpus INTEGER NOT NULL DEFAULT 0;\n"
       "ALTER TABLE nodes ADD COLUMN memory_mb INTEGER NOT NULL DEFAULT 0;"},
      {30,
       "the run as a series (issue 41): per-attempt step buckets, MFU as work over time, "
       "implausible MFU flagged, and each attempt's error excerpt",
       R"sql(
-- One row per bucket of an attempt's steps (step / series_width): bounded per attempt, merged
-- pairwise when the attempt outgrows its cap.
CREATE TABLE series_buckets (
  attempt_id INTEGER NOT NULL REFERENCES attempts(id) ON DELETE CASCADE,
  bucket INTEGER NOT NULL,
  first_step INTEGER NOT NULL,
  last_step INTEGER NOT NULL,
  first_ms INTEGER NOT NULL,
  last_ms INTEGER NOT NULL,
  steps INTEGER NOT NULL,
  loss_n INTEGER NOT NULL DEFAULT 0,
  loss_sum REAL NOT NULL DEFAULT 0,
  loss_min REAL,
  loss_max REAL,
  loss_last REAL,
  timed_steps INTEGER NOT NULL DEFAULT 0,
  tokens REAL NOT NULL DEFAULT 0,
  tokens_time_s REAL NOT NULL DEFAULT 0,
  step_time_s REAL NOT NULL DEFAULT 0,
  step_time_max REAL,
  mfu_work REAL NOT NULL DEFAULT 0,
  mfu_time_s REAL NOT NULL DEFAULT 0,
  PRIMARY KEY (attempt_id, bucket)
) WITHOUT ROWID;
ALTER TABLE attempts ADD COLUMN series_width INTEGER NOT NULL DEFAULT 1;
-- A row per step, written and never read: the series above replaces it.
DROP TABLE progress_samples;
-- MFU per minute as work over time: sum of mfu x step time, and the step time it covers.
ALTER TABLE mfu_buckets ADD COLUMN time_s REAL NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN mfu_flag TEXT NOT NULL DEFAULT '';
ALTER TABLE attempts ADD COLUMN error_excerpt TEXT NOT NULL DEFAULT '';
)sql"},
      {31,
       "transfers that scale (issue 42): each transfer's purpose (replication, staging, manual) "
       "and the job it copies for, so the list groups by them; the active and failed ones "
       "read newest first from an index of their own (a page costs its rows, not the history); "
       "bytes moved per minute, for the throughput chart",
       R"sql(
ALTER TABLE transfers ADD COLUMN purpose TEXT NOT NULL DEFAULT 'replication';
ALTER TABLE transfers ADD COLUMN job_id INTEGER;
UPDATE transfers SET job_id =
  (SELECT c.job_id FROM checkpoints c WHERE c.id = transfers.checkpoint_id)
  WHERE checkpoint_id IS NOT NULL;
UPDATE transfers SET purpose = 'manual' WHERE why LIKE 'requested by a person%';
UPDATE transfers SET purpose = 'staging', job_id = CAST(substr(why, 17) AS INTEGER)
  WHERE why LIKE 'staging for job %';
UPDATE transfers SET purpose = 'staging',
  job_id = CAST(substr(why, instr(why, ' for job ') + 9) AS INTEGER)
  WHERE checkpoint_id IS NULL AND dataset IS NULL AND why LIKE 'code % for job %';
CREATE INDEX transfers_shown ON transfers(id)
  WHERE state IN ('queued', 'running', 'verifying', 'failed');
-- Bytes copied in each minute (ms / 60000) as progress reports move bytes_done; a week kept.
CREATE TABLE transfer_minutes (
  minute INTEGER PRIMARY KEY,
  bytes INTEGER NOT NULL
);
CREATE TRIGGER transfer_bytes_moved AFTER UPDATE OF bytes_done ON transfers
  WHEN NEW.bytes_done > OLD.bytes_done BEGIN
  INSERT INTO transfer_minutes(minute, bytes)
    VALUES (NEW.updated_ms / 60000, NEW.bytes_done - OLD.bytes_done)
    ON CONFLICT(minute) DO UPDATE SET bytes = bytes + excluded.bytes;
  DELETE FROM transfer_minutes WHERE minute < NEW.updated_ms / 60000 - 10080;
END;
)sql"},
      {32,
       "an attempt placed and stopped before it launched says why (issue 42): it is not counted "
       "as an attempt of the job's history",
       "ALTER TABLE attempts ADD COLUMN not_launched TEXT NOT NULL DEFAULT '';"},
      {33,
       "our own attempts are never other tenants' (issue 42): the GPUs of our attempts that "
       "ended on a node since its site last listed it, which that listing still counts as busy",
       "ALTER TABLE nodes ADD COLUMN gpus_ours_gone INTEGER NOT NULL DEFAULT 0;"},
      {34,
       "I/O stalls (issue 43): each checkpoint save an agent saw run past its bound, once per "
       "save, for the job's io-stall event and the cluster's storage health in the scorecard",
       R"sql(
CREATE TABLE io_stalls (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  attempt_id INTEGER NOT NULL,
  job_id INTEGER NOT NULL,
  cluster TEXT NOT NULL,
  node TEXT NOT NULL DEFAULT '',
  step INTEGER NOT NULL,
  path TEXT NOT NULL,
  fs TEXT NOT NULL DEFAULT '',
  mount TEXT NOT NULL DEFAULT '',
  running_s REAL NOT NULL DEFAULT 0,
  after_s REAL NOT NULL DEFAULT 0,
  at_ms INTEGER NOT NULL,
  UNIQUE(attempt_id, step, path)
);
CREATE INDEX io_stalls_at ON io_stalls(at_ms);
)sql"},
      {35,
       "lemons judged by rate (issue 43): each node's failures under work and the GPU-hours our "
       "attempts ran on it, running totals kept as attempts end, so judging a node never reads "
       "its history",
       "ALTER TABLE nodes ADD COLUMN work_failures INTEGER NOT NULL DEFAULT 0;\n"
       "ALTER TABLE nodes ADD COLUMN work_gpu_h REAL NOT NULL DEFAULT 0;"},
      {36,
       "what GPU-hours cost (issue 45): a running tally of ended attempts' GPU-hours and money "
       "by UTC month, team, cluster and kind (useful, redone, restart, queued, failed), kept in "
       "the transaction that ends an attempt or records the steps it lost; month '*' holds the "
       "all-time totals, so /metrics and the reports never read the attempts' history",
       R"sql(
CREATE TABLE cost_tally (
  month TEXT NOT NULL,
  team TEXT NOT NULL,
  cluster TEXT NOT NULL,
  kind TEXT NOT NULL,
  gpu_hours REAL NOT NULL DEFAULT 0,
  money REAL NOT NULL DEFAULT 0,
  PRIMARY KEY (month, team, cluster, kind)
) WITHOUT ROWID;
)sql"},
      {37,
       "team budgets (issue 45): the 80% and 100% thresholds announced per team and UTC month, "
       "so that each budget webhook fires once, restarts included",
       R"sql(
CREATE TABLE budget_alerts (
  month TEXT NOT NULL,
  team TEXT NOT NULL,
  threshold INTEGER NOT NULL,
  at_ms INTEGER NOT NULL,
  PRIMARY KEY (month, team, threshold)
) WITHOUT ROWID;
)sql"},
  };
}

}  // namespace orch
