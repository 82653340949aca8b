#pragma once
// pods/exec over WebSocket (what `kubectl exec` and `kubectl cp` use): a command run "in" a
// running pod's first container, i.e. as a local process with the container's environment,
// in the pod's directory, seeing the pod's volume links (pod_volumes.h).
//
// Protocols v5.channel.k8s.io (preferred) and v4.channel.k8s.io: every binary message starts
// with its channel (0 stdin, 1 stdout, 2 stderr, 3 the final Status, v5 also 255 = close the
// channel in the next byte). Query: command (repeated), container, stdin, stdout, stderr
// (tty is refused). With stdin, the client's input is read to its close (v5) before the
// output is sent: the process's stdout and stderr wait in files meanwhile (the fake serves one
// direction at a time; a real kubelet streams both). Status on channel 3: {"status":"Success"}
// or Failure with reason NonZeroExitCode and the code in details.causes, as the kubelet writes.

#include "testkit/fake_kube/api_routes.h"
#include "testkit/fake_kube/http_exchange.h"

namespace orch::fake_kube {

// false when the path is not /api/v1/namespaces/NS/pods/NAME/exec.
bool handle_exec(ApiState& state, const Request& request, ResponseWriter& out);

}  // namespace orch::fake_kube
