# Sourced by the scripts that start processes in the background (cluster.sh).
#
# kill_child SIGNAL PID sends SIGNAL to PID only while PID is this shell's own child
# (its parent, in /proc/PID/stat, is this shell). The number of a child that ended and
# was reaped is free for the kernel to give to any new process or thread, and kill(2)
# of a thread's number signals its whole process: a cleanup that SIGKILLed every number
# a chaos run had started could take the test binary that ran the script.
kill_child() {
  local stat
  stat=$(cat "/proc/$2/stat" 2>/dev/null) || return 0
  # The fields after the command name (in parentheses, which may hold spaces): the
  # state, then the parent's number.
  set -- "$1" "$2" ${stat##*) }
  if [ "$4" = "$$" ]; then kill "-$1" "$2" 2>/dev/null || true; fi
}
