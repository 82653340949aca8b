#include "testkit/fake_kube/pod_exec.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "testkit/fake_kube/cluster.h"
#include "testkit/fake_kube/container_spec.h"
#include "testkit/fake_kube/kube_json.h"

namespace orch::fake_kube {
namespace {

constexpr std::size_t kChunk = 32 << 10;

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  std::size_t start = 1;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    out.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

struct Child {
  pid_t pid = -1;
  int in = -1;   // write end of its stdin (-1: /dev/null)
  int out = -1;  // read ends, or -1 when going to files
  int err = -1;
};

// fork/exec with stdin a pipe or /dev/null, stdout/stderr pipes or the files given.
Child start(const std::vector<std::string>& argv, const std::vector<std::string>& env,
            const std::string& cwd, bool with_stdin, const std::string& out_file,
            const std::string& err_file) {
  int in_pipe[2] = {-1, -1};
  int out_pipe[2] = {-1, -1};
  int err_pipe[2] = {-1, -1};
  if (with_stdin && pipe2(in_pipe, O_CLOEXEC) != 0) return {};
  if (out_file.empty() && (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0)) {
    return {};
  }
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  envp.reserve(env.size() + 1);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    setsid();
    const int in = with_stdin ? in_pipe[0] : open("/dev/null", O_RDONLY);
    const int out =
        out_file.empty() ? out_pipe[1] : open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err =
        out_file.empty() ? err_pipe[1] : open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) {
      _exit(127);
    }
    ::close_range(3, ~0U, 0);
    if (chdir(cwd.c_str()) != 0) _exit(127);
    for (int sig : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD}) signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  Child c;
  c.pid = pid;
  if (with_stdin) {
    close(in_pipe[0]);
    c.in = in_pipe[1];
  }
  if (out_file.empty()) {
    close(out_pipe[1]);
    close(err_pipe[1]);
    c.out = out_pipe[0];
    c.err = err_pipe[0];
  }
  return c;
}

std::string status_json(int wait_status, const std::vector<std::string>& argv) {
  int code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status)
                                    : 128 + (WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0);
  if (code == 0) return json{{"metadata", json::object()}, {"status", "Success"}}.dump();
  std::string command;
  for (const auto& a : argv) command += (command.empty() ? "" : " ") + a;
  return json{
      {"metadata", json::object()},
      {"status", "Failure"},
      {"message", "command terminated with non-zero exit code: error executing command [" +
                      command + "], exit code " + std::to_string(code)},
      {"reason", "NonZeroExitCode"},
      {"details", {{"causes", {{{"reason", "ExitCode"}, {"message", std::to_string(code)}}}}}}}
      .dump();
}

bool send_channel(WebSocket& ws, char channel, std::string_view data) {
  std::string message(1, channel);
  message.append(data);
  return ws.write(message);
}

void send_file(WebSocket& ws, char channel, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string buffer(kChunk, '\0');
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
    if (!send_channel(ws, channel,
                      std::string_view(buffer.data(), static_cast<std::size_t>(in.gcount())))) {
      return;
    }
  }
}

int wait_child(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

bool handle_exec(ApiState& state, const Request& req, ResponseWriter& out) {
  const auto seg = split_path(req.path);
  if (seg.size() != 7 || seg[0] != "api" || seg[1] != "v1" || seg[2] != "namespaces" ||
      seg[4] != "pods" || seg[6] != "exec") {
    return false;
  }
  const std::string& ns = seg[3];
  const std::string& name = seg[5];
  if (req.method != "GET" && req.method != "POST") {
    send_error(out, ApiError(405, "MethodNotAllowed", "the server does not allow this method"));
    return true;
  }
  Cluster& cluster = state.cluster;
  const auto pod = cluster.store().get("pods", ns, name);
  if (!pod) {
    send_error(out, ApiError(404, "NotFound", "pods \"" + name + "\" not found"));
    return true;
  }
  std::vector<std::string> argv;
  for (const auto& [k, v] : req.query_all) {
    if (k == "command") argv.push_back(v);
  }
  const auto truthy = [&](const char* key) {
    const std::string v = req.param(key);
    return v == "1" || v == "true";
  };
  if (argv.empty()) {
    send_error(out, ApiError(400, "BadRequest", "you must specify at least 1 command"));
    return true;
  }
  if (truthy("tty")) {
    send_error(out, ApiError(400, "BadRequest", "the fake does not serve tty exec"));
    return true;
  }
  // A frozen node's kubelet does not answer: the API server cannot reach it.
  const std::string node = string_at(*pod, {"spec", "nodeName"});
  if (cluster.locked([&] { return cluster.kubelet().frozen(node); })) {
    send_error(out, ApiError(500, "InternalError",
                             "error dialing backend: dial tcp " + node +
                                 ":10250: connect: no route to host"));
    return true;
  }
  if (string_at(*pod, {"status", "phase"}) != "Running") {
    send_error(out, ApiError(400, "BadRequest",
                             "unable to upgrade connection: container not found (\"" +
                                 string_at(*pod, {"spec", "containers", "0", "name"}) + "\")"));
    return true;
  }
  const std::string offered = req.header("sec-websocket-protocol");
  const std::string protocol =
      offered.find("v5.channel.k8s.io") != std::string::npos   ? "v5.channel.k8s.io"
      : offered.find("v4.channel.k8s.io") != std::string::npos ? "v4.channel.k8s.io"
                                                               : "";
  if (protocol.empty()) {
    send_error(out, ApiError(400, "BadRequest",
                             "upgrade request required with subprotocol v5.channel.k8s.io or "
                             "v4.channel.k8s.io"));
    return true;
  }
  std::string dir;
  ContainerLaunch launch;
  cluster.locked([&] {
    dir = cluster.kubelet().pod_dir(*pod);
    launch = container_launch(
        *pod, first_container(*pod), dir, "/dev/null", cluster.kubelet().api_port(),
        [&](const std::string& secret) { return cluster.store().get("secrets", ns, secret); });
  });
  // The pod's own emptyDirs, as its container sees them (pod_volumes.h).
  for (auto& word : argv) word = rewrite_private_mounts(word, launch.private_mounts);
  std::string search = "/usr/bin:/bin";
  for (const auto& e : launch.process.env) {
    if (e.rfind("PATH=", 0) == 0) search = e.substr(5);
  }
  const std::string exe = find_executable(argv[0], search);
  auto ws = out.accept_websocket(protocol);
  if (!ws) return true;
  if (exe.empty()) {
    send_channel(*ws, 3,
                 json{{"metadata", json::object()},
                      {"status", "Failure"},
                      {"message", "exec: \"" + argv[0] + "\": executable file not found in $PATH"},
                      {"reason", "InternalError"}}
                     .dump());
    ws->close();
    return true;
  }
  std::vector<std::string> run = argv;
  run[0] = exe;
  const bool with_stdin = truthy("stdin");
  const std::string out_file = with_stdin ? dir + "/.exec-" + random_suffix() + ".out" : "";
  const std::string err_file = with_stdin ? out_file.substr(0, out_file.size() - 4) + ".err" : "";
  Child child = start(run, launch.process.env, dir, with_stdin, out_file, err_file);
  if (child.pid <= 0) {
    send_channel(*ws, 3,
                 json{{"status", "Failure"}, {"message", "cannot start the command"}}.dump());
    ws->close();
    return true;
  }
  std::uint64_t carried = 0;  // stdout sent plus stdin received, for the cut hook
  if (with_stdin) {
    bool gone = false;
    bool cut = false;
    while (child.in >= 0 && !cut) {
      auto message = ws->read();
      if (!message) {
        gone = true;
        break;
      }
      if (message->empty()) continue;
      const char channel = (*message)[0];
      if (channel == 0) {
        std::string_view data(*message);
        data.remove_prefix(1);
        const std::size_t pass = state.exec_cut.allow(carried, data.size());
        cut = pass < data.size();
        carried += pass;
        data = data.substr(0, pass);
        while (!data.empty()) {
          const ssize_t n = ::write(child.in, data.data(), data.size());
          if (n <= 0) break;
          data.remove_prefix(static_cast<std::size_t>(n));
        }
      } else if (static_cast<unsigned char>(channel) == 255 && message->size() >= 2 &&
                 (*message)[1] == 0) {
        close(child.in);
        child.in = -1;
      }
    }
    if (gone || cut) {
      if (child.in >= 0) close(child.in);
      kill(-child.pid, SIGKILL);
      wait_child(child.pid);
      std::remove(out_file.c_str());
      std::remove(err_file.c_str());
      if (cut) ws->close();  // no Status: the stream broke
      return true;
    }
    const int status = wait_child(child.pid);
    send_file(*ws, 1, out_file);
    send_file(*ws, 2, err_file);
    std::remove(out_file.c_str());
    std::remove(err_file.c_str());
    send_channel(*ws, 3, status_json(status, argv));
    ws->close();
    return true;
  }
  // No stdin: stream stdout and stderr as they come.
  std::string buffer(kChunk, '\0');
  bool client_gone = false;
  bool cut = false;
  int open_fds = 2;
  pollfd fds[2] = {{child.out, POLLIN, 0}, {child.err, POLLIN, 0}};
  while (open_fds > 0 && !client_gone) {
    if (::poll(fds, 2, 1000) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buffer.data(), buffer.size());
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      std::size_t pass = static_cast<std::size_t>(n);
      if (i == 0) {
        pass = state.exec_cut.allow(carried, pass);
        cut = pass < static_cast<std::size_t>(n);
        carried += pass;
      }
      if ((pass > 0 &&
           !send_channel(*ws, static_cast<char>(i + 1), std::string_view(buffer.data(), pass))) ||
          cut) {
        client_gone = true;
        break;
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  if (client_gone) kill(-child.pid, SIGKILL);
  const int status = wait_child(child.pid);
  if (cut) ws->close();  // no Status: the stream broke
  if (!client_gone) {
    send_channel(*ws, 3, status_json(status, argv));
    ws->close();
  }
  return true;
}

}  // namespace orch::fake_kube
