#include "testkit/fake_kube/test_pki.h"

#include "scheduler/common/base64.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "testkit/fake_kube/kube_json.h"

namespace orch::fake_kube {
namespace {

// Runs openssl with args; stdout and stderr are captured for the error message.
void openssl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"openssl"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> raw;
  for (auto& a : argv) raw.push_back(a.data());
  raw.push_back(nullptr);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const int null_fd = open("/dev/null", O_RDONLY);
    dup2(null_fd, 0);
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    execvp("openssl", raw.data());
    _exit(127);
  }
  close(fds[1]);
  std::string output;
  char buf[4096];
  ssize_t n = 0;
  while ((n = read(fds[0], buf, sizeof buf)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    output.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string cmd;
    for (const auto& a : argv) cmd += a + " ";
    throw std::runtime_error("`" + cmd + "` failed: " + output);
  }
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

CertFiles make_test_ca(const std::string& dir, const std::string& stem, const std::string& cn,
                       int days) {
  std::filesystem::create_directories(dir);
  const CertFiles ca{dir + "/" + stem + ".crt", dir + "/" + stem + ".key"};
  openssl({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
           "-keyout", ca.key, "-out", ca.cert, "-days", std::to_string(days), "-subj", "/CN=" + cn,
           "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
           "keyUsage=critical,keyCertSign,cRLSign"});
  return ca;
}

CertFiles make_test_cert(const std::string& dir, const std::string& stem, const std::string& cn,
                         const CertFiles& ca, const std::string& extensions, int days) {
  std::filesystem::create_directories(dir);
  const CertFiles out{dir + "/" + stem + ".crt", dir + "/" + stem + ".key"};
  const std::string csr = dir + "/" + stem + ".csr";
  const std::string ext = dir + "/" + stem + ".ext";
  openssl({"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
           out.key, "-out", csr, "-subj", "/CN=" + cn});
  write_text(ext, extensions);
  openssl({"x509", "-req", "-in", csr, "-CA", ca.cert, "-CAkey", ca.key, "-CAcreateserial", "-out",
           out.cert, "-days", std::to_string(days), "-extfile", ext});
  return out;
}

TestPki make_test_pki(const std::string& dir, const std::string& name) {
  const CertFiles ca = make_test_ca(dir, "ca", name + "-ca");
  const CertFiles server = make_test_cert(dir, "server", name + "-apiserver", ca,
                                          "basicConstraints=CA:FALSE\n"
                                          "keyUsage=critical,digitalSignature,keyEncipherment\n"
                                          "extendedKeyUsage=serverAuth\n"
                                          "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  return TestPki{dir, ca.cert, ca.key, server.cert, server.key};
}

std::string base64(const std::string& bytes) {
  return encode_base64(bytes);
}

void write_kubeconfig(const std::string& path, const KubeconfigOptions& o) {
  std::string cluster = "    server: " + o.server + "\n";
  if (o.insecure_skip_tls_verify) {
    cluster += "    insecure-skip-tls-verify: true\n";
  } else if (!o.ca_file.empty()) {
    cluster += "    certificate-authority-data: " + base64(read_text(o.ca_file)) + "\n";
  }
  write_text(path,
             "apiVersion: v1\n"
             "kind: Config\n"
             "clusters:\n"
             "- name: " +
                 o.cluster +
                 "\n"
                 "  cluster:\n" +
                 cluster +
                 "users:\n"
                 "- name: " +
                 o.user +
                 "\n"
                 "  user:\n"
                 "    token: " +
                 o.token +
                 "\n"
                 "contexts:\n"
                 "- name: " +
                 o.context +
                 "\n"
                 "  context:\n"
                 "    cluster: " +
                 o.cluster +
                 "\n"
                 "    user: " +
                 o.user +
                 "\n"
                 "    namespace: " +
                 o.ns +
                 "\n"
                 "current-context: " +
                 o.context +
                 "\n"
                 "preferences: {}\n");
}

std::string random_token() {
  return random_hex(32);
}

}  // namespace orch::fake_kube
