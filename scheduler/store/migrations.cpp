#include "scheduler/store/migrations.h"

#include <utility>

namespace orch {
namespace {

// function-length: table (one entry per schema version)
std::vector<Migration> first_migrations() {
  return {
      {1, "clusters, jobs, attempts, events, outbox",
       R"sql(
CREATE TABLE clusters (
  name TEXT PRIMARY KEY,
  health TEXT NOT NULL DEFAULT 'healthy',
  unreachable_since_ms INTEGER,
  message TEXT NOT NULL DEFAULT ''
);
CREATE TABLE jobs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  state TEXT NOT NULL,
  spec TEXT NOT NULL,
  infra_restarts INTEGER NOT NULL DEFAULT 0,
  user_restarts INTEGER NOT NULL DEFAULT 0,
  next_attempt_ms INTEGER,
  reason TEXT NOT NULL DEFAULT '',
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL
);
CREATE INDEX jobs_state ON jobs(state);
CREATE TABLE attempts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  no INTEGER NOT NULL,
  cluster TEXT NOT NULL,
  token TEXT NOT NULL UNIQUE,
  state TEXT NOT NULL,
  cause TEXT NOT NULL DEFAULT 'none',
  exit_code INTEGER,
  signal INTEGER,
  site_job_id TEXT NOT NULL DEFAULT '',
  nodes TEXT NOT NULL DEFAULT '[]',
  gpus INTEGER NOT NULL,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  launch_done INTEGER NOT NULL DEFAULT 0,
  resumed_from_step INTEGER,
  resumed_from_path TEXT NOT NULL DEFAULT '',
  started_ms INTEGER NOT NULL,
  ended_ms INTEGER,
  UNIQUE(job_id, no)
);
CREATE INDEX attempts_live ON attempts(cluster, state);
CREATE TABLE events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id INTEGER REFERENCES jobs(id) ON DELETE CASCADE,
  attempt_no INTEGER,
  at_ms INTEGER NOT NULL,
  kind TEXT NOT NULL,
  message TEXT NOT NULL
);
CREATE INDEX events_job ON events(job_id);
CREATE TABLE outbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  cluster TEXT NOT NULL,
  kind TEXT NOT NULL,
  token TEXT NOT NULL,
  payload TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  done_ms INTEGER
);
CREATE INDEX outbox_pending ON outbox(cluster, done_ms);
)sql"},
      {2, "progress: checkpoints, samples, placement verdicts",
       R"sql(
ALTER TABLE attempts ADD COLUMN first_step INTEGER;
ALTER TABLE attempts ADD COLUMN last_step INTEGER;
ALTER TABLE attempts ADD COLUMN tokens_total REAL NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN step_time_total REAL NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN mfu REAL;
ALTER TABLE attempts ADD COLUMN steps_lost INTEGER NOT NULL DEFAULT 0;
CREATE TABLE checkpoints (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  attempt_id INTEGER NOT NULL REFERENCES attempts(id) ON DELETE CASCADE,
  step INTEGER NOT NULL,
  path TEXT NOT NULL,
  save_time_s REAL,
  at_ms INTEGER NOT NULL,
  UNIQUE(job_id, step, path)
);
CREATE TABLE progress_samples (
  attempt_id INTEGER NOT NULL REFERENCES attempts(id) ON DELETE CASCADE,
  step INTEGER NOT NULL,
  tokens INTEGER,
  step_time_s REAL,
  mfu REAL,
  at_ms INTEGER NOT NULL,
  PRIMARY KEY (attempt_id, step)
);
CREATE TABLE placement_verdicts (
  job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  cluster TEXT NOT NULL,
  feasible INTEGER NOT NULL,
  reason TEXT NOT NULL,
  score REAL,
  chosen INTEGER NOT NULL DEFAULT 0,
  at_ms INTEGER NOT NULL,
  PRIMARY KEY (job_id, cluster)
);
)sql"},
      {3, "nodes; attempts the site has not yet confirmed gone",
       R"sql(
ALTER TABLE attempts ADD COLUMN site_done INTEGER NOT NULL DEFAULT 0;
UPDATE attempts SET site_done = 1 WHERE state = 'exited';
CREATE TABLE nodes (
  cluster TEXT NOT NULL REFERENCES clusters(name) ON DELETE CASCADE,
  name TEXT NOT NULL,
  gpus INTEGER NOT NULL,
  healthy INTEGER NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  seen_ms INTEGER NOT NULL,
  PRIMARY KEY (cluster, name)
);
)sql"},
      {4, "node events: the node ledger's first entries",
       R"sql(
CREATE TABLE node_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  cluster TEXT NOT NULL REFERENCES clusters(name) ON DELETE CASCADE,
  node TEXT NOT NULL,
  at_ms INTEGER NOT NULL,
  kind TEXT NOT NULL,
  message TEXT NOT NULL,
  job_id INTEGER REFERENCES jobs(id) ON DELETE SET NULL,
  attempt_no INTEGER
);
CREATE INDEX node_events_cluster ON node_events(cluster, id);
CREATE INDEX node_events_node ON node_events(cluster, node, id);
)sql"},
      {5,
       "health: node standing (quarantine), cluster admission, probes, MFU history, "
       "reachability log, attempt running and progress times",
       R"sql(
ALTER TABLE clusters ADD COLUMN admission TEXT NOT NULL DEFAULT 'active';
ALTER TABLE clusters ADD COLUMN created_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE clusters ADD COLUMN burn_in_token TEXT NOT NULL DEFAULT '';
ALTER TABLE nodes ADD COLUMN state TEXT NOT NULL DEFAULT 'active';
ALTER TABLE nodes ADD COLUMN quarantines INTEGER NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN quarantined_at_ms INTEGER;
ALTER TABLE nodes ADD COLUMN state_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE nodes ADD COLUMN probe_token TEXT NOT NULL DEFAULT '';
ALTER TABLE attempts ADD COLUMN running_ms INTEGER;
ALTER TABLE attempts ADD COLUMN last_progress_ms INTEGER;
ALTER TABLE attempts ADD COLUMN mfu_watch TEXT NOT NULL DEFAULT '{}';
ALTER TABLE attempts ADD COLUMN hang_after_ms INTEGER NOT NULL DEFAULT 0;
CREATE INDEX attempts_running ON attempts(state) WHERE state = 'running';
CREATE INDEX node_events_kind ON node_events(kind, at_ms);
CREATE TABLE probes (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  cluster TEXT NOT NULL REFERENCES clusters(name) ON DELETE CASCADE,
  node TEXT NOT NULL,
  token TEXT NOT NULL,
  at_ms INTEGER NOT NULL,
  passed INTEGER NOT NULL,
  reason TEXT NOT NULL,
  gemm_gflops REAL,
  write_mb_s REAL,
  read_mb_s REAL,
  raw TEXT NOT NULL
);
CREATE INDEX probes_node ON probes(cluster, node, id);
CREATE TABLE mfu_buckets (
  attempt_id INTEGER NOT NULL REFERENCES attempts(id) ON DELETE CASCADE,
  cluster TEXT NOT NULL,
  nodes TEXT NOT NULL,
  bucket_ms INTEGER NOT NULL,
  mfu_sum REAL NOT NULL,
  samples INTEGER NOT NULL,
  PRIMARY KEY (attempt_id, bucket_ms)
);
CREATE INDEX mfu_buckets_cluster ON mfu_buckets(cluster, bucket_ms);
CREATE TABLE health_log (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  cluster TEXT NOT NULL REFERENCES clusters(name) ON DELETE CASCADE,
  at_ms INTEGER NOT NULL,
  health TEXT NOT NULL
);
CREATE INDEX health_log_at ON health_log(at_ms);
)sql"},
      {6, "data: checkpoint manifests, copies per site, datasets, transfers",
       R"sql(
ALTER TABLE checkpoints ADD COLUMN manifest TEXT;
ALTER TABLE checkpoints ADD COLUMN bytes INTEGER;
CREATE TABLE datasets (
  name TEXT PRIMARY KEY,
  manifest TEXT,
  bytes INTEGER NOT NULL DEFAULT 0,
  created_ms INTEGER NOT NULL
);
CREATE TABLE replicas (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  checkpoint_id INTEGER REFERENCES checkpoints(id) ON DELETE CASCADE,
  dataset TEXT REFERENCES datasets(name) ON DELETE CASCADE,
  cluster TEXT NOT NULL,
  path TEXT NOT NULL,
  state TEXT NOT NULL,
  detail TEXT NOT NULL DEFAULT '',
  updated_ms INTEGER NOT NULL,
  verified_ms INTEGER,
  audited_ms INTEGER,
  CHECK ((checkpoint_id IS NULL) <> (dataset IS NULL))
);
CREATE UNIQUE INDEX replicas_of_checkpoint ON replicas(checkpoint_id, cluster)
  WHERE checkpoint_id IS NOT NULL;
CREATE UNIQUE INDEX replicas_of_dataset ON replicas(dataset, cluster) WHERE dataset IS NOT NULL;
CREATE INDEX replicas_at ON replicas(cluster, state);
CREATE TABLE transfers (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  checkpoint_id INTEGER REFERENCES checkpoints(id) ON DELETE CASCADE,
  dataset TEXT REFERENCES datasets(name) ON DELETE CASCADE,
  replica_id INTEGER NOT NULL,
  src_cluster TEXT NOT NULL,
  src_path TEXT NOT NULL,
  dst_cluster TEXT NOT NULL,
  dst_path TEXT NOT NULL,
  directory INTEGER NOT NULL,
  state TEXT NOT NULL,
  why TEXT NOT NULL DEFAULT '',
  bytes_total INTEGER NOT NULL DEFAULT 0,
  bytes_done INTEGER NOT NULL DEFAULT 0,
  rate_bps REAL NOT NULL DEFAULT 0,
  cap_bps REAL NOT NULL DEFAULT 0,
  base_cap_bps REAL NOT NULL DEFAULT 0,
  cap_changed_ms INTEGER,
  tries INTEGER NOT NULL DEFAULT 0,
  next_try_ms INTEGER,
  error TEXT NOT NULL DEFAULT '',
  route TEXT NOT NULL DEFAULT '',
  copy_seconds REAL NOT NULL DEFAULT 0,
  copied_bytes INTEGER NOT NULL DEFAULT 0,
  created_ms INTEGER NOT NULL,
  started_ms INTEGER,
  ended_ms INTEGER,
  updated_ms INTEGER NOT NULL
);
CREATE INDEX transfers_active ON transfers(state);
)sql"},
      {7, "reads at the cost of what they return: the job's cluster, indexes for live attempts",
       R"sql(
ALTER TABLE jobs ADD COLUMN cluster TEXT;
UPDATE jobs SET cluster =
  (SELECT a.cluster FROM attempts a WHERE a.job_id = jobs.id ORDER BY a.no DESC LIMIT 1);
DROP INDEX jobs_state;
CREATE INDEX jobs_state ON jobs(state, id);
CREATE INDEX jobs_cluster ON jobs(cluster, id);
CREATE INDEX attempts_not_exited ON attempts(cluster) WHERE state != 'exited';
CREATE INDEX attempts_unsettled ON attempts(cluster) WHERE state != 'exited' OR site_done = 0;
DROP INDEX events_job;
CREATE INDEX events_job ON events(job_id, id);
CREATE INDEX attempts_started ON attempts(started_ms);
CREATE INDEX attempts_ended ON attempts(ended_ms);
CREATE INDEX checkpoints_at ON checkpoints(at_ms);
CREATE INDEX transfers_done ON transfers(src_cluster, dst_cluster, id) WHERE state = 'done';
)sql"},
      {8, "a revision per job, moved by every write to the job, its attempts or checkpoints",
       // Kept in a table of its own: moving a column of jobs would rewrite the job's row, spec
       // and all, on every progress report of its attempt.
       R"sql(
CREATE TABLE job_revisions (
  job_id INTEGER PRIMARY KEY,
  revision INTEGER NOT NULL
);
INSERT INTO job_revisions(job_id, revision) SELECT id, 0 FROM jobs;
CREATE TRIGGER jobs_added AFTER INSERT ON jobs
BEGIN INSERT INTO job_revisions(job_id, revision) VALUES (NEW.id, 0); END;
CREATE TRIGGER jobs_revised AFTER UPDATE ON jobs
BEGIN UPDATE job_revisions SET revision = revision + 1 WHERE job_id = NEW.id; END;
CREATE TRIGGER attempts_added AFTER INSERT ON attempts
BEGIN UPDATE job_revisions SET revision = revision + 1 WHERE job_id = NEW.job_id; END;
CREATE TRIGGER attempts_revised AFTER UPDATE ON attempts
BEGIN UPDATE job_revisions SET revision = revision + 1 WHERE job_id = NEW.job_id; END;
CREATE TRIGGER attempts_removed AFTER DELETE ON attempts
BEGIN UPDATE job_revisions SET revision = revision + 1 WHERE job_id = OLD.job_id; END;
CREATE TRIGGER checkpoints_added AFTER INSERT ON checkpoints
BEGIN UPDATE job_revisions SET revision = revision + 1 WHERE job_id = NEW.job_id; END;
CREATE TRIGGER checkpoints_revised AFTER UPDATE ON checkpoints
BEGIN UPDATE job_revisions SET revision = revision + 1 WHERE job_id = NEW.job_id; END;
CREATE TRIGGER checkpoints_removed AFTER DELETE ON checkpoints
BEGIN UPDATE job_revisions SET revision = revision + 1 WHERE job_id = OLD.job_id; END;
)sql"},
      {9, "gangs: the node that failed first, the hang policy's startup limit and step times",
       // Attempts already running keep the rule they started under: silence counted from the
       // start, with the same limit before and after the first progress line.
       R"sql(
ALTER TABLE attempts ADD COLUMN failed_node TEXT NOT NULL DEFAULT '';
ALTER TABLE attempts ADD COLUMN startup_timeout_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN hang_watch TEXT NOT NULL DEFAULT '{}';
UPDATE attempts SET startup_timeout_ms = hang_after_ms WHERE state != 'exited' AND hang_after_ms > 0;
)sql"},
      {10, "the hardware lottery: ledger entries by incident, an attempt's last sign of life",
       // Entries written before keep an empty incident: each counts as one of its own.
       R"sql(
ALTER TABLE node_events ADD COLUMN incident TEXT NOT NULL DEFAULT '';
ALTER TABLE attempts ADD COLUMN last_alive_ms INTEGER;
)sql"},
      {11, "clusters drained, activated and retired by a person: when and why",
       R"sql(
ALTER TABLE clusters ADD COLUMN admission_ms INTEGER;
ALTER TABLE clusters ADD COLUMN admission_reason TEXT NOT NULL DEFAULT '';
)sql"},
      {12, "support tickets with each cluster's provider and their history",
       R"sql(
CREATE TABLE tickets (
  id INTEGER PRIMARY KEY,
  cluster TEXT NOT NULL,
  summary TEXT NOT NULL,
  nodes TEXT NOT NULL DEFAULT '[]',
  incident TEXT NOT NULL DEFAULT '',
  opened_ms INTEGER NOT NULL,
  first_response_ms INTEGER,
  resolved_ms INTEGER,
  resolution TEXT NOT NULL DEFAULT ''
);
CREATE INDEX tickets_by_cluster ON tickets(cluster, opened_ms);
CREATE INDEX tickets_open ON tickets(resolved_ms) WHERE resolved_ms IS NULL;
CREATE TABLE ticket_notes (
  id INTEGER PRIMARY KEY,
  ticket_id INTEGER NOT NULL REFERENCES tickets(id),
  at_ms INTEGER NOT NULL,
  kind TEXT NOT NULL,
  text TEXT NOT NULL
);
CREATE INDEX ticket_notes_by_ticket ON ticket_notes(ticket_id, id);
)sql"},
      {13, "when a cluster ordered with a promised date was delivered",
       R"sql(
ALTER TABLE clusters ADD COLUMN delivered_ms INTEGER;
)sql"},
      {14, "clusters added to a running server, with the document that defined each",
       R"sql(
CREATE TABLE added_clusters (
  name TEXT PRIMARY KEY,
  source TEXT NOT NULL,
  document TEXT NOT NULL,
  added_ms INTEGER NOT NULL
);
)sql"},
      {15, "who submitted each job and for which team, as columns that job lists filter on",
       R"sql(
ALTER TABLE jobs ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN team TEXT NOT NULL DEFAULT '';
UPDATE jobs SET owner = coalesce(json_extract(spec, '$.owner'), ''),
                team = coalesce(json_extract(spec, '$.team'), '')
  WHERE json_extract(spec, '$.owner') IS NOT NULL OR json_extract(spec, '$.team') IS NOT NULL;
CREATE INDEX jobs_owner ON jobs(owner, id);
CREATE INDEX jobs_team ON jobs(team, id);
)sql"},
      {16,
       "running totals kept by triggers (jobs by state, ended attempts by cause, bytes copied), "
       "so that /metrics reads a few rows however long the history",
       R"sql(
CREATE TABLE tallies (
  kind TEXT NOT NULL,
  key TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (kind, key)
) WITHOUT ROWID;
INSERT INTO tallies(kind, key, n) SELECT 'job_state', state, COUNT(*) FROM jobs GROUP BY state;
INSERT INTO tallies(kind, key, n)
  SELECT 'attempt_cause', cause, COUNT(*) FROM attempts WHERE cause <> 'none' GROUP BY cause;
INSERT INTO tallies(kind, key, n)
  SELECT 'transfer_bytes', 'done', coalesce(SUM(bytes_total), 0) FROM transfers WHERE state = 'done';
CREATE TRIGGER tally_job_insert AFTER INSERT ON jobs BEGIN
  INSERT INTO tallies(kind, key, n) VALUES ('job_state', NEW.state, 1)
    ON CONFLICT(kind, key) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER tally_job_state AFTER UPDATE OF state ON jobs WHEN OLD.state <> NEW.state BEGIN
  UPDATE tallies SET n = n - 1 WHERE kind = 'job_state' AND key = OLD.state;
  INSERT INTO tallies(kind, key, n) VALUES ('job_state', NEW.state, 1)
    ON CONFLICT(kind, key) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER tally_job_delete AFTER DELETE ON jobs BEGIN
  UPDATE tallies SET n = n - 1 WHERE kind = 'job_state' AND key = OLD.state;
END;
CREATE TRIGGER tally_attempt_insert AFTER INSERT ON attempts WHEN NEW.cause <> 'none' BEGIN
  INSERT INTO tallies(kind, key, n) VALUES ('attempt_cause', NEW.cause, 1)
    ON CONFLICT(kind, key) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER tally_attempt_cause AFTER UPDATE OF cause ON attempts
  WHEN OLD.cause <> NEW.cause BEGIN
  UPDATE tallies SET n = n - 1 WHERE kind = 'attempt_cause' AND key = OLD.cause AND OLD.cause <> 'none';
  INSERT INTO tallies(kind, key, n) SELECT 'attempt_cause', NEW.cause, 1 WHERE NEW.cause <> 'none'
    ON CONFLICT(kind, key) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER tally_transfer_done AFTER UPDATE OF state ON transfers
  WHEN NEW.state = 'done' AND OLD.state <> 'done' BEGIN
  INSERT INTO tallies(kind, key, n) VALUES ('transfer_bytes', 'done', NEW.bytes_total)
    ON CONFLICT(kind, key) DO UPDATE SET n = n + NEW.bytes_total;
END;
)sql"},
      {17,
       "notices: the events webhooks are told of, copied by triggers as they are written, so "
       "that their delivery reads one table in order and never holds up the brain",
       R"sql(
CREATE TABLE notices (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at_ms INTEGER NOT NULL,
  kind TEXT NOT NULL,
  message TEXT NOT NULL,
  job_id INTEGER,
  attempt_no INTEGER,
  cluster TEXT NOT NULL DEFAULT '',
  node TEXT NOT NULL DEFAULT ''
);
CREATE TRIGGER notice_of_event AFTER INSERT ON events
  WHEN NEW.kind IN ('succeeded', 'failed', 'attempt-ended', 'mfu-drop', 'checkpoint-lost',
                    'site-down') BEGIN
  INSERT INTO notices(at_ms, kind, message, job_id, attempt_no)
    VALUES (NEW.at_ms, NEW.kind, NEW.message, NEW.job_id, NEW.attempt_no);
END;
CREATE TRIGGER notice_of_node_event AFTER INSERT ON node_events
  WHEN NEW.kind IN ('quarantined', 'retired') BEGIN
  INSERT INTO notices(at_ms, kind, message, job_id, attempt_no, cluster, node)
    VALUES (NEW.at_ms, NEW.kind, NEW.message, NEW.job_id, NEW.attempt_no, NEW.cluster, NEW.node);
END;
)sql"},
      {18,
       "preemption for priority: the attempt a job of higher priority asked to make room, "
       "when it was asked, and the job it makes room for",
       R"sql(
ALTER TABLE attempts ADD COLUMN preempt_for INTEGER;
ALTER TABLE attempts ADD COLUMN preempt_asked_ms INTEGER;
CREATE INDEX attempts_preempting ON attempts(preempt_for)
  WHERE preempt_for IS NOT NULL AND (state != 'exited' OR site_done = 0);
)sql"},
      {19,
       "placement verdicts as one row per job (a JSON array of every cluster's verdict): a "
       "placement decision writes one row, not one per cluster",
       R"sql(
CREATE TABLE placement_explain (
  job_id INTEGER PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,
  at_ms INTEGER NOT NULL,
  verdicts TEXT NOT NULL
);
INSERT INTO placement_explain(job_id, at_ms, verdicts)
  SELECT job_id, MAX(at_ms),
         json_group_array(json_object('cluster', cluster, 'feasible', feasible, 'reason', reason,
                                      'score', score, 'chosen', chosen))
  FROM placement_verdicts GROUP BY job_id;
DROP TABLE placement_verdicts;
)sql"},
      {20, "each job's group (a sweep's points share one), as a column job lists filter on",
       R"sql(
ALTER TABLE jobs ADD COLUMN grp TEXT NOT NULL DEFAULT '';
UPDATE jobs SET grp = json_extract(spec, '$.group') WHERE json_extract(spec, '$.group') IS NOT NULL;
CREATE INDEX jobs_group ON jobs(grp, id);
)sql"},
  };
}

}  // namespace

const std::vector<Migration>& migrations() {
  static const std::vector<Migration> list = [] {
    std::vector<Migration> all = first_migrations();
    for (auto& m : later_migrations()) all.push_back(std::move(m));
    return all;
  }();
  return list;
}

}  // namespace orch
