#pragma once
// Whether a TCP port accepts a connection right now: the cheap check that ends an SSH session's
// back-off as soon as the login node answers again (issue 15). Only the handshake: nothing is
// sent, and the socket is closed at once.

#include <chrono>
#include <string>

namespace orch {

// True when host:port completed a TCP handshake within timeout (every address the name
// resolves to is tried in turn, within the one timeout).
bool tcp_port_answers(const std::string& host, int port, std::chrono::milliseconds timeout);

}  // namespace orch
