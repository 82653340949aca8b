// The data verifier (issue 5): what a listing of a copy says (a new copy's manifest registered,
// a transferred copy verified against its source's, an audit's sample), copies found gone,
// changed or outside their directory, the audits due, and the pre-launch check's verdicts. A
// copy found bad has its transfers cancelled and its job's replication planned again
// (data_transfers.h). Rules: docs/data.md.
#include <cstdio>

#include "scheduler/brain/data_verifier.h"
#include "scheduler/data/replication_plan.h"
#include "scheduler/data/staging.h"

namespace orch {
namespace {

std::string size_text(std::int64_t bytes) {
  char buf[32];
  const auto b = static_cast<double>(bytes);
  if (b >= 1e9) {
    std::snprintf(buf, sizeof buf, "%.2f GB", b / 1e9);
  } else if (b >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.1f MB", b / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(bytes));
  }
  return buf;
}

}  // namespace

// ---- what a listing says ---------------------------------------------------------------------

Result<BrainReply> DataVerifier::on(const ManifestCompleted& e) {
  if (auto r = store_.mark_action_done(e.outbox_id, clock_.now_ms()); !r) return r.error();
  const std::int64_t replica_id = e.payload.value("replica_id", std::int64_t{0});
  const std::string purpose_text = e.payload.value("purpose", std::string());
  const auto purpose = parse_manifest_purpose(purpose_text);
  registry_.end_audit(replica_id);
  if (!purpose) {
    // Written by an older or newer server: say so, and let the action go rather than retry it.
    if (auto r = store_.add_event(std::nullopt, std::nullopt, clock_.now_ms(), "bad-action",
                                  "manifest action " + std::to_string(e.outbox_id) +
                                      " has an unknown purpose \"" + purpose_text +
                                      "\"; expected register, verify or audit");
        !r) {
      return r.error();
    }
    return BrainReply{};
  }
  auto replica = store_.replica(replica_id);
  if (!replica) return replica.error();
  // A deleted copy is gone; a refused one is never looked at again.
  if (!*replica || (*replica)->state == ReplicaState::deleted ||
      (*replica)->state == ReplicaState::refused) {
    return BrainReply{};
  }
  ReplicaRow& r = **replica;
  Result<void> done = Ok{};
  switch (*purpose) {
    case ManifestPurpose::register_copy:
      done = on_registered(r, e);
      break;
    case ManifestPurpose::verify:
      done = on_verified(r, e);
      break;
    case ManifestPurpose::audit:
      done = on_audited(r, e);
      break;
  }
  if (!done) return done.error();
  return BrainReply{};
}

// person registered): its manifest becomes the object's, or is checked against it.
Result<void> DataVerifier::on_registered(ReplicaRow& r, const ManifestCompleted& e) {
  const Millis now = clock_.now_ms();
  auto name = registry_.object_name(r);
  if (!name) return name.error();
  auto job = registry_.job_of(r);
  if (!job) return job.error();
  if (!e.result) {
    if (e.result.error().kind == ErrorKind::not_found) {
      return replica_failed(r, ReplicaState::missing, e.result.error().message, "its listing");
    }
    if (e.result.error().kind == ErrorKind::forbidden) {
      return refuse_copy(r, e.result.error().message, "its listing");
    }
    r.detail = "could not be listed: " + e.result.error().message;
    r.updated_ms = now;
    return store_.update_replica(r);
  }
  const Manifest& observed = *e.result;
  auto registered = registry_.registered_manifest(r);
  if (!registered) return registered.error();
  if (*registered) {
    ManifestDiff diff = compare_manifest(**registered, observed);
    if (!diff.matches) {
      return replica_failed(r, ReplicaState::corrupt, diff.difference, "its listing");
    }
  } else if (r.checkpoint_id) {
    if (auto s = store_.set_checkpoint_manifest(*r.checkpoint_id, manifest_to_json(observed),
                                                static_cast<std::int64_t>(observed.total_bytes()));
        !s) {
      return s;
    }
  } else {
    if (auto s = store_.set_dataset_manifest(r.dataset, manifest_to_json(observed),
                                             static_cast<std::int64_t>(observed.total_bytes()));
        !s) {
      return s;
    }
  }
  r.state = ReplicaState::verified;
  r.verified_ms = now;
  r.audited_ms = now;
  r.detail = std::to_string(observed.files.size()) + " file(s), " +
             size_text(static_cast<std::int64_t>(observed.total_bytes())) + ", SHA-256 listed";
  r.updated_ms = now;
  if (auto s = store_.update_replica(r); !s) return s;
  if (*job) {
    if (auto s = event(**job, std::nullopt, "checkpoint-verified",
                       *name + " verified at " + r.cluster + ": " + r.detail);
        !s) {
      return s;
    }
    return transfers_.replicate_job(**job);
  }
  return Ok{};
}

// A transferred copy, listed at its destination: the transfer is done when it matches.
// A copy that does not match its source: corrupt, its transfer tried again or failed.
Result<void> DataVerifier::on_copy_mismatch(ReplicaRow& r, std::optional<TransferRow>& t,
                                            std::optional<JobId> job, const std::string& name,
                                            const std::string& problem) {
  const Millis now = clock_.now_ms();
  r.state = ReplicaState::corrupt;
  r.detail = "the copy failed its verification: " + problem;
  r.updated_ms = now;
  if (auto s = store_.update_replica(r); !s) return s;
  if (t && t->state == TransferState::verifying) {
    TransferRow& tr = *t;
    tr.error = "verification failed: " + problem;
    tr.updated_ms = now;
    if (tr.tries >= kTransferMaxTries) {
      tr.state = TransferState::failed;
      tr.ended_ms = now;
    } else {
      tr.state = TransferState::queued;
      tr.next_try_ms = now + transfer_retry_delay_ms(tr.tries);
    }
    if (auto s = store_.update_transfer(tr); !s) return s;
  }
  const std::string kind = "transfer-verify-failed";
  const std::string what =
      "the copy of " + name + " at " + r.cluster + " does not match: " + problem;
  if (!job) return store_.add_event(std::nullopt, std::nullopt, now, kind, what);
  return event(*job, std::nullopt, kind,
               what + (t && t->state == TransferState::failed
                           ? "; giving up after " + std::to_string(t->tries) + " tries"
                           : "; copying it again, comparing checksums"));
}

Result<void> DataVerifier::on_verified(ReplicaRow& r, const ManifestCompleted& e) {
  const Millis now = clock_.now_ms();
  const std::int64_t transfer_id = e.payload.value("transfer_id", std::int64_t{0});
  auto t = store_.transfer(transfer_id);
  if (!t) return t.error();
  auto registered = registry_.registered_manifest(r);
  if (!registered) return registered.error();
  auto name = registry_.object_name(r);
  if (!name) return name.error();
  auto job = registry_.job_of(r);
  if (!job) return job.error();

  std::optional<std::string> problem;
  if (!e.result && e.result.error().kind == ErrorKind::forbidden) {
    // The destination resolves outside orchestrate's own directory: never tried again.
    if (*t && transfer_active((*t)->state)) {
      (*t)->state = TransferState::failed;
      (*t)->error = "its destination is refused: " + e.result.error().message;
      (*t)->ended_ms = now;
      (*t)->updated_ms = now;
      if (auto s = store_.update_transfer(**t); !s) return s;
    }
    return refuse_copy(r, e.result.error().message, "its verification");
  }
  if (!e.result) {
    problem = e.result.error().message;
  } else if (!*registered) {
    problem = "the source's manifest is not known";
  } else if (ManifestDiff diff = compare_manifest(**registered, *e.result); !diff.matches) {
    problem = diff.difference;
  }
  if (problem) return on_copy_mismatch(r, *t, *job, *name, *problem);
  r.state = ReplicaState::verified;
  r.verified_ms = now;
  r.audited_ms = now;
  r.detail = "copied from " + ((*t) ? (*t)->src_cluster : std::string("?")) + " and verified";
  r.updated_ms = now;
  if (auto s = store_.update_replica(r); !s) return s;
  std::string how;
  if (*t) {
    TransferRow& tr = **t;
    tr.state = TransferState::done;
    tr.ended_ms = now;
    tr.bytes_done = tr.bytes_total;
    tr.updated_ms = now;
    tr.error.clear();
    if (auto s = store_.update_transfer(tr); !s) return s;
    char buf[160];
    const double rate =
        tr.copy_seconds > 0 ? static_cast<double>(tr.bytes_total) / tr.copy_seconds : 0.0;
    std::snprintf(buf, sizeof buf, " (%s in %.1f s, %.1f MB/s, %s)",
                  size_text(tr.bytes_total).c_str(), tr.copy_seconds, rate / 1e6, tr.route.c_str());
    how = buf;
  }
  if (*job) {
    if (auto s = event(**job, std::nullopt, "checkpoint-replicated",
                       *name + " copied to " + r.cluster + " and verified" + how);
        !s) {
      return s;
    }
    return transfers_.replicate_job(**job);
  }
  return Ok{};
}

Result<void> DataVerifier::on_audited(ReplicaRow& r, const ManifestCompleted& e) {
  const Millis now = clock_.now_ms();
  if (!e.result) {
    if (e.result.error().kind == ErrorKind::not_found) {
      return replica_failed(r, ReplicaState::missing, e.result.error().message, "the audit");
    }
    if (e.result.error().kind == ErrorKind::forbidden) {
      return refuse_copy(r, e.result.error().message, "the audit");
    }
    r.detail = "the audit could not list it: " + e.result.error().message;
    r.updated_ms = now;
    return store_.update_replica(r);
  }
  auto registered = registry_.registered_manifest(r);
  if (!registered) return registered.error();
  if (!*registered) return Ok{};
  ManifestDiff diff = compare_manifest(**registered, *e.result);
  if (!diff.matches) return replica_failed(r, ReplicaState::corrupt, diff.difference, "the audit");
  r.audited_ms = now;
  r.updated_ms = now;
  return store_.update_replica(r);
}

Result<void> DataVerifier::replica_failed(ReplicaRow& r, ReplicaState to, const std::string& why,
                                          const std::string& found_by) {
  const Millis now = clock_.now_ms();
  if (r.state == to || r.state == ReplicaState::refused) return Ok{};  // refused is final
  r.state = to;
  r.detail = found_by + ": " + why;
  r.updated_ms = now;
  if (auto s = store_.update_replica(r); !s) return s;
  auto name = registry_.object_name(r);
  if (!name) return name.error();
  auto job = registry_.job_of(r);
  if (!job) return job.error();
  if (auto s = transfers_.cancel_transfers_from(
          r, "its source at " + r.cluster + " is " + std::string(to_string(to)));
      !s) {
    return s;
  }
  const std::string what = to == ReplicaState::missing ? "missing" : "changed";
  const std::string kind = r.checkpoint_id ? "checkpoint-lost" : "dataset-lost";
  const std::string message = "the copy of " + *name + " at " + r.cluster + " is " + what + " (" +
                              found_by + ": " + why + "); marked " + std::string(to_string(to)) +
                              " there";
  if (*job) {
    if (auto s = event(**job, std::nullopt, kind, message); !s) return s;
    return transfers_.replicate_job(**job);
  }
  return store_.add_event(std::nullopt, std::nullopt, now, kind, message);
}

Result<void> DataVerifier::refuse_copy(ReplicaRow& r, const std::string& why,
                                       const std::string& found_by) {
  const Millis now = clock_.now_ms();
  if (r.state == ReplicaState::refused) return Ok{};
  r.state = ReplicaState::refused;
  r.detail = found_by + ": " + why;
  r.updated_ms = now;
  if (auto s = store_.update_replica(r); !s) return s;
  if (auto s = transfers_.cancel_transfers_from(r, "its source at " + r.cluster + " is refused");
      !s) {
    return s;
  }
  auto name = registry_.object_name(r);
  if (!name) return name.error();
  auto job = registry_.job_of(r);
  if (!job) return job.error();
  // What the job reported leads out of its directory: its line was bad. Found later (an audit,
  // a verification, the check before a launch), a copy was turned into a way out.
  const bool reported = found_by == "its listing";
  const std::string message =
      reported ? name.value() + " at " + r.cluster + " is not registered: " + why +
                     "; nothing of it is listed, copied or deleted. Write checkpoints as files or "
                     "directories under $ORCH_CHECKPOINT_DIR, without links out of it"
               : "the copy of " + name.value() + " at " + r.cluster + " is refused (" + found_by +
                     ": " + why + "); it is never listed, copied or deleted again";
  const std::string kind = reported ? "bad-progress-line" : "checkpoint-refused";
  if (*job) {
    if (auto s = event(**job, std::nullopt, kind, message); !s) return s;
    return transfers_.replicate_job(**job);
  }
  return store_.add_event(std::nullopt, std::nullopt, now, kind, message);
}

// ---- audits ----------------------------------------------------------------------------------

Result<void> DataVerifier::start_due_audits(bool force, const std::string& only_cluster) {
  const Millis now = clock_.now_ms();
  for (const auto& spec : clusters_) {
    if (!only_cluster.empty() && spec.name != only_cluster) continue;
    if (!lists_storage_at(&spec)) continue;
    const Millis interval = static_cast<Millis>(spec.data.audit_interval_s * 1000.0);
    if (!force) {
      if (interval <= 0) continue;
      auto it = last_audit_ms_.find(spec.name);
      if (it == last_audit_ms_.end()) {
        last_audit_ms_[spec.name] = now;  // the first audit one interval after start
        continue;
      }
      if (now - it->second < interval) continue;
    }
    last_audit_ms_[spec.name] = now;
    auto copies = store_.live_replicas(spec.name);
    if (!copies) return copies.error();
    const std::int64_t round = interval > 0 ? now / interval : now / 1000;
    for (const auto& r : *copies) {
      if (registry_.auditing(r.id)) continue;
      if (r.state == ReplicaState::verified) {
        auto m = registry_.registered_manifest(r);
        if (!m) return m.error();
        if (!*m) continue;
        std::vector<std::string> sample = audit_sample(**m, round + r.id);
        if (sample.empty()) sample.push_back("");  // one file: hash it
        registry_.begin_audit(r.id);
        if (auto s = registry_.request_manifest(r, ManifestPurpose::audit, std::nullopt, sample);
            !s)
          return s;
      } else if (r.state == ReplicaState::present) {
        registry_.begin_audit(r.id);
        if (auto s = registry_.request_manifest(r, ManifestPurpose::register_copy); !s) return s;
      }
    }
  }
  return Ok{};
}

Result<BrainReply> DataVerifier::on(const StartAudit& e) {
  if (!e.cluster.empty() && !cluster_spec(e.cluster)) {
    return make_error(ErrorKind::not_found, "no cluster " + e.cluster + " is configured");
  }
  if (auto r = start_due_audits(true, e.cluster); !r) return r.error();
  BrainReply reply;
  reply.message = "auditing every copy " + (e.cluster.empty() ? "everywhere" : "at " + e.cluster);
  return reply;
}

// ---- the pre-launch check ---------------------------------------------------------------------

Result<void> DataVerifier::mark_rejected_copies(const AttemptRow& a,
                                                const std::vector<RejectedCheckpoint>& rejected) {
  for (const auto& rej : rejected) {
    auto copies = store_.replicas_of_checkpoint(rej.checkpoint_id);
    if (!copies) return copies.error();
    for (auto& r : *copies) {
      if (r.cluster != a.cluster || r.state == ReplicaState::deleted) continue;
      const std::string found_by = "the check before attempt " + std::to_string(a.no);
      if (rej.outside) {
        if (auto s = refuse_copy(r, rej.why, found_by); !s) return s;
        continue;
      }
      if (auto s = replica_failed(r, rej.missing ? ReplicaState::missing : ReplicaState::corrupt,
                                  rej.why, found_by);
          !s) {
        return s;
      }
    }
  }
  return Ok{};
}

Result<void> DataVerifier::note_resume_choice(AttemptRow& a, const ResumeChoice& choice) {
  // No check ran (no candidates, or a launcher that does not check): the plan stands.
  if (!choice.checkpoint_id && choice.rejected.empty()) return Ok{};
  if (auto r = mark_rejected_copies(a, choice.rejected); !r) return r;
  const std::optional<std::int64_t> step =
      choice.checkpoint_id ? std::optional<std::int64_t>{choice.step} : std::nullopt;
  if (choice.rejected.empty() && step == a.resumed_from_step) return Ok{};
  const std::optional<std::int64_t> planned = a.resumed_from_step;
  a.resumed_from_step = step;
  a.resumed_from_path = choice.checkpoint_id ? choice.path : std::string();
  if (auto s = store_.update_attempt(a); !s) return s;
  std::string msg = "attempt " + std::to_string(a.no) + " on " + a.cluster + " resumes ";
  msg += step ? "from step " + std::to_string(*step) + " (" + choice.path + ")"
              : std::string("from the start");
  if (!choice.rejected.empty()) {
    msg += ", not from step " + std::to_string(choice.rejected.front().step) + ": " +
           choice.rejected.front().why;
  } else if (planned) {
    msg += " (planned: step " + std::to_string(*planned) + ")";
  }
  return event(a.job_id, a.no, "resume-checked", msg);
}

}  // namespace orch
