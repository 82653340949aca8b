#include "web/metrics_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <utility>

namespace orch {
namespace {

using Labels = std::initializer_list<std::pair<const char*, std::string>>;

std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char text[40];
  std::snprintf(text, sizeof text, "%.15g", v);
  return text;
}

class Writer {
 public:
  void family(const char* name, const char* type, const char* help) {
    name_ = std::string("orchestrate_") + name;
    out_ += "# HELP " + name_ + " " + help + "\n# TYPE " + name_ + " " + type + "\n";
  }
  void sample(Labels labels, double value, const char* suffix = "") {
    out_ += name_ + suffix;
    if (labels.size() > 0) {
      out_ += '{';
      bool first = true;
      for (const auto& [key, v] : labels) {
        if (!first) out_ += ',';
        first = false;
        out_ += key;
        out_ += "=\"" + escape_label_value(v) + "\"";
      }
      out_ += '}';
    }
    out_ += ' ' + number(value) + '\n';
  }
  std::string take() { return std::move(out_); }

 private:
  std::string name_;
  std::string out_;
};

}  // namespace

std::string escape_label_value(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string metrics_text(const MetricsSnapshot& s) {
  Writer w;
  w.family("jobs", "gauge", "Jobs by state.");
  for (const auto& [state, n] : s.jobs_by_state)
    w.sample({{"state", state}}, static_cast<double>(n));
  w.family("attempts_ended_total", "counter", "Attempts that ended, by cause.");
  for (const auto& [cause, n] : s.attempts_by_cause) {
    w.sample({{"cause", cause}}, static_cast<double>(n));
  }

  w.family("job_step", "gauge", "The newest step of each job not yet finished.");
  for (const auto& j : s.live_jobs) {
    if (j.step)
      w.sample({{"job", std::to_string(j.id)}, {"name", j.name}, {"cluster", j.cluster}}, *j.step);
  }
  w.family("job_ettr_ratio", "gauge",
           "Effective training time ratio of each job not yet finished (0 to 1).");
  for (const auto& j : s.live_jobs) {
    if (j.ettr)
      w.sample({{"job", std::to_string(j.id)}, {"name", j.name}, {"cluster", j.cluster}}, *j.ettr);
  }
  w.family("job_mfu_ratio", "gauge",
           "Model FLOP utilisation of each job not yet finished (0 to 1).");
  for (const auto& j : s.live_jobs) {
    if (j.mfu)
      w.sample({{"job", std::to_string(j.id)}, {"name", j.name}, {"cluster", j.cluster}}, *j.mfu);
  }

  w.family("cluster_gpus", "gauge",
           "GPUs of each cluster: used by orchestrate, held by other tenants, and free.");
  for (const auto& c : s.clusters) {
    w.sample({{"cluster", c.name}, {"use", "used"}}, c.gpus_used);
    w.sample({{"cluster", c.name}, {"use", "foreign"}}, c.gpus_foreign);
    w.sample({{"cluster", c.name}, {"use", "free"}},
             std::max(0, c.gpus_total - c.gpus_used - c.gpus_foreign));
  }
  w.family("cluster_site_health", "gauge",
           "1 for each cluster's site health now (healthy, unreachable or down).");
  for (const auto& c : s.clusters) {
    for (const char* h : {"healthy", "unreachable", "down"}) {
      w.sample({{"cluster", c.name}, {"health", h}}, c.health == h ? 1 : 0);
    }
  }
  w.family("cluster_active", "gauge",
           "1 when the cluster's admission is active (it gets new work).");
  for (const auto& c : s.clusters) {
    w.sample({{"cluster", c.name}, {"admission", c.admission}}, c.admission == "active" ? 1 : 0);
  }
  w.family("nodes", "gauge", "Nodes by standing in each cluster.");
  for (const auto& n : s.nodes) {
    w.sample({{"cluster", n.cluster}, {"state", n.state}}, static_cast<double>(n.count));
  }

  w.family("cost_total", "counter",
           "Money the attempts' GPU-hours cost in the fleet's currency (price: in the clusters "
           "file), by team, cluster and kind (useful; lost: redone, restart, queued, failed).");
  for (const auto& c : s.costs) {
    w.sample({{"team", c.team}, {"cluster", c.cluster}, {"kind", c.kind}}, c.money);
  }
  // In seconds, Prometheus's base unit (promtool refuses hours): GPU-hours x 3,600.
  w.family("cost_gpu_seconds_total", "counter",
           "GPU-seconds the attempts held, by team, cluster and kind (as orchestrate_cost_total).");
  for (const auto& c : s.costs) {
    w.sample({{"team", c.team}, {"cluster", c.cluster}, {"kind", c.kind}}, c.gpu_hours * 3600.0);
  }

  w.family("transfer_bytes_copied_total", "counter", "Bytes of transfers that finished.");
  w.sample({}, static_cast<double>(s.transfer_bytes_done));
  w.family("transfer_bytes", "gauge", "Bytes of each active transfer, done and in total.");
  for (const auto& t : s.transfers) {
    const std::string id = std::to_string(t.id);
    w.sample({{"transfer", id}, {"from", t.from}, {"to", t.to}, {"part", "done"}},
             static_cast<double>(t.bytes_done));
    w.sample({{"transfer", id}, {"from", t.from}, {"to", t.to}, {"part", "total"}},
             static_cast<double>(t.bytes_total));
  }
  w.family("transfer_rate_bytes_per_second", "gauge",
           "The rate each active transfer last reported.");
  for (const auto& t : s.transfers) {
    w.sample({{"transfer", std::to_string(t.id)}, {"from", t.from}, {"to", t.to}},
             t.rate_bytes_per_s);
  }

  w.family("brain_queue_events", "gauge", "Events waiting for the brain.");
  w.sample({}, static_cast<double>(s.brain_queue));
  w.family("brain_event_seconds", "histogram", "Time the brain took over each event.");
  const auto& h = s.event_seconds;
  for (std::size_t i = 0; i < h.bounds.size() && i < h.cumulative.size(); ++i) {
    w.sample({{"le", number(h.bounds[i])}}, static_cast<double>(h.cumulative[i]), "_bucket");
  }
  w.sample({{"le", "+Inf"}}, static_cast<double>(h.count), "_bucket");
  w.sample({}, h.sum, "_sum");
  w.sample({}, static_cast<double>(h.count), "_count");
  w.family("outbox_pending_actions", "gauge", "Outbox actions not yet carried out, per cluster.");
  for (const auto& c : s.clusters)
    w.sample({{"cluster", c.name}}, static_cast<double>(c.pending_actions));
  w.family("site_last_answer_age_seconds", "gauge",
           "Seconds since each cluster's site last answered.");
  for (const auto& c : s.clusters) {
    if (c.last_answer_age_s) w.sample({{"cluster", c.name}}, *c.last_answer_age_s);
  }
  if (!s.refused_requests.empty()) {
    w.family("refused_requests_total", "counter",
             "Requests refused before any route ran (no or bad token, role, content type, "
             "Host, rate limit), by status.");
    for (const auto& [status, n] : s.refused_requests)
      w.sample({{"status", status}}, static_cast<double>(n));
  }
  return w.take();
}

}  // namespace orch
