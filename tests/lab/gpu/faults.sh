# Sourced by every stand-in GPU tool in tests/lab/gpu/ (nvidia-smi, dcgmi, all_reduce_perf, ...).
# Reads "$(dirname "$0")/faults" when present: one fault per line, `NODE FAULT VALUE`, `#` starts
# a comment, blank lines are skipped. NODE is a node name or two joined by `+` (a pair, for
# busbw_ratio). The node this runs on is $SLURMD_NODENAME, else $ORCH_NODE_NAME, else hostname.
#
# Defines:
#   FAULT_NODE              this node's name
#   fault_value FAULT       prints this node's VALUE for FAULT (the last line wins); status 1
#                           when there is none. A pair line (a+b) does not count here.
#   fault_pair_value FAULT A B
#                           prints VALUE of the line `A+B FAULT VALUE` or `B+A FAULT VALUE`;
#                           status 1 when there is none
#   fault_or FAULT DEFAULT  prints this node's VALUE for FAULT, else DEFAULT
#   fault_lines             prints every fault line (NODE FAULT VALUE, comments stripped)
#
# The stand-in's GPUs: 8 x "NVIDIA H100 80GB HBM3", PCIe gen 5 x16, healthy unless a fault says
# otherwise (tests/lab/gpu/README.md lists the faults).

FAULT_NODE="${SLURMD_NODENAME:-}"
[ -n "$FAULT_NODE" ] || FAULT_NODE="${ORCH_NODE_NAME:-}"
[ -n "$FAULT_NODE" ] || FAULT_NODE="$(hostname 2>/dev/null || uname -n)"
FAULTS_FILE="${FAULTS_FILE:-$(cd "$(dirname "$0")" && pwd)/faults}"

fault_lines() {
  [ -r "$FAULTS_FILE" ] || return 0
  local line
  while IFS= read -r line || [ -n "$line" ]; do
    line="${line%%#*}"
    # shellcheck disable=SC2086
    set -- $line
    [ $# -ge 3 ] || continue
    printf '%s %s %s\n' "$1" "$2" "$3"
  done < "$FAULTS_FILE"
}

fault_value() {
  local want="$1" node fault value found=1 out=""
  while read -r node fault value; do
    if [ "$node" = "$FAULT_NODE" ] && [ "$fault" = "$want" ]; then
      out="$value"
      found=0
    fi
  done < <(fault_lines)
  [ $found -eq 0 ] && printf '%s\n' "$out"
  return $found
}

fault_pair_value() {
  local want="$1" a="$2" b="$3" node fault value found=1 out=""
  while read -r node fault value; do
    if { [ "$node" = "$a+$b" ] || [ "$node" = "$b+$a" ]; } && [ "$fault" = "$want" ]; then
      out="$value"
      found=0
    fi
  done < <(fault_lines)
  [ $found -eq 0 ] && printf '%s\n' "$out"
  return $found
}

fault_or() {
  fault_value "$1" || printf '%s\n' "$2"
}
