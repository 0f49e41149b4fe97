"""The option tables of the commands that run other commands (``wrappers``): which short
options take an argument, which long ones do, which stop the command from running anything,
and the wrappers whose options are not modelled at all. Pure data."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FIND_EXEC", "FIND_WRITES", "HELP", "OPTIONS", "RUNUSER", "SETARCH_ALIASES", "SHELLS", "SU", "UNKNOWABLE",
           "Options", "fs"]


@dataclass(frozen=True, slots=True)
class Options:
    flags: str = ""  # short options without an argument
    with_arg: str = ""  # short options whose argument is attached or the next word
    optional: str = ""  # short options whose optional argument can only be attached (xargs -i)
    long_flags: frozenset[str] = frozenset()
    long_args: frozenset[str] = frozenset()  # --opt VALUE or --opt=VALUE
    long_optional: frozenset[str] = frozenset()  # --opt or --opt=VALUE
    stop: frozenset[str] = frozenset()  # options after which nothing is run (sudo -l, command -v)
    positional: int = 0  # words between the options and the command (timeout's DURATION)
    leading: int = 0  # words before the options (setarch's ARCH)
    digits: bool = False  # -NUMBER is an option (nice -5)



def fs(*items: str) -> frozenset[str]:
    return frozenset(items)


HELP = fs("--help", "--version")
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish", "rbash", "tcsh", "csh"})

OPTIONS: dict[str, Options] = {
    "sudo": Options(
        "AbEHiknPSs", "CDgpRrTtUu",
        long_flags=fs("--askpass", "--background", "--bell", "--login", "--non-interactive", "--preserve-groups",
                       "--stdin", "--shell", "--set-home", "--reset-timestamp"),
        long_args=fs("--user", "--group", "--host", "--prompt", "--close-from", "--chdir", "--role", "--type",
                      "--other-user", "--command-timeout", "--chroot"),
        long_optional=fs("--preserve-env"),
        stop=fs("-e", "-l", "-v", "-V", "-K", "--edit", "--list", "--validate", "--remove-timestamp", *HELP),
    ),
    "doas": Options("ns", "u", stop=fs("-L", "-C")),
    "pkexec": Options(long_flags=fs("--keep-cwd", "--disable-internal-agent"), long_args=fs("--user"),
                       stop=HELP),
    "nice": Options(with_arg="n", long_args=fs("--adjustment"), stop=HELP, digits=True),
    "nohup": Options(stop=HELP),
    "setsid": Options("cfw", long_flags=fs("--ctty", "--fork", "--wait"), stop=HELP),
    "time": Options("apqv", "fo", long_flags=fs("--append", "--portability", "--verbose", "--quiet"),
                     long_args=fs("--format", "--output"), stop=HELP),
    "timeout": Options("fpv", "ks", long_flags=fs("--foreground", "--preserve-status", "--verbose"),
                        long_args=fs("--kill-after", "--signal"), stop=HELP, positional=1),
    "stdbuf": Options(with_arg="ioe", long_args=fs("--input", "--output", "--error"), stop=HELP),
    "ionice": Options("t", "cn", long_flags=fs("--ignore"), long_args=fs("--class", "--classdata"),
                       stop=fs("-p", "-P", "-u", "--pid", "--pgid", "--uid", *HELP)),
    "unbuffer": Options("p"),
    "busybox": Options(stop=fs("--list", "--list-full", "--help", "--install")),
    "command": Options("p", stop=fs("-v", "-V")),
    "builtin": Options(),
    "exec": Options("cl", "a"),
    "xargs": Options(
        "0ortpx", "aEILnPsd", "eil",
        long_flags=fs("--null", "--interactive", "--no-run-if-empty", "--open-tty", "--verbose", "--exit"),
        long_args=fs("--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"),
        long_optional=fs("--eof", "--replace", "--max-lines"),
        stop=fs("--show-limits", *HELP),
    ),
    "env": Options(
        "i0v", "uC",
        long_flags=fs("--ignore-environment", "--null", "--debug"),
        long_args=fs("--unset", "--chdir"),
        long_optional=fs("--block-signal", "--default-signal", "--ignore-signal"),
        stop=fs("--list-signal-handling", *HELP),
    ),
    "setarch": Options(
        "RFZLXBIST3v",
        long_flags=fs("--addr-no-randomize", "--fdpic-funcptrs", "--mmap-page-zero", "--addr-compat-layout",
                       "--read-implies-exec", "--32bit", "--short-inode", "--whole-seconds", "--sticky-timeouts",
                       "--3gb", "--4gb", "--uname-2.6", "--verbose"),
        stop=fs("--list", "--show", *HELP), leading=1,
    ),
    "prlimit": Options(
        with_arg="o", optional="cdefilmnqrstuvxy",
        long_flags=fs("--noheadings", "--raw", "--verbose"), long_args=fs("--output"),
        long_optional=fs("--core", "--data", "--nice", "--fsize", "--sigpending", "--memlock", "--rss", "--nofile",
                          "--msgqueue", "--rtprio", "--stack", "--cpu", "--nproc", "--as", "--locks", "--rttime"),
        stop=fs("-p", "--pid", "-V", *HELP),
    ),
    "setpriv": Options(
        long_flags=fs("--clear-groups", "--keep-groups", "--init-groups", "--nnp", "--no-new-privs", "--reset-env"),
        long_args=fs("--ruid", "--euid", "--rgid", "--egid", "--reuid", "--regid", "--groups", "--inh-caps",
                      "--ambient-caps", "--bounding-set", "--securebits", "--pdeathsig", "--selinux-label",
                      "--apparmor-profile", "--landlock-access", "--landlock-rule"),
        stop=fs("-d", "--dump", "-V", *HELP),
    ),
    "fakeroot": Options("u", "lisb", long_flags=fs("--unknown-is-real"), long_args=fs("--lib", "--faked"),
                         stop=fs("-h", "-v", *HELP)),
    "chroot": Options(long_flags=fs("--skip-chdir"), long_args=fs("--groups", "--userspec"), stop=HELP,
                       positional=1),
    "chrt": Options("abdefiorRv", "TPD",
                     long_flags=fs("--all-tasks", "--batch", "--deadline", "--fifo", "--idle", "--other",
                                    "--rr", "--reset-on-fork", "--verbose"),
                     long_args=fs("--sched-runtime", "--sched-period", "--sched-deadline"),
                     stop=fs("-p", "-m", "--pid", "--max", "-V", *HELP), positional=1),
    "taskset": Options("ac", long_flags=fs("--all-tasks", "--cpu-list"), stop=fs("-p", "--pid", "-V", *HELP),
                        positional=1),
}
SETARCH_ALIASES = frozenset({"linux32", "linux64", "i386", "i486", "i586", "i686", "x86_64", "aarch64", "arm64",
                              "armv7l", "ppc", "ppc64", "ppc64le", "s390", "s390x", "mips", "mips64", "parisc",
                              "sparc", "sparc64", "ia64", "uname26"})
UNKNOWABLE = frozenset({
    "parallel", "script", "nsenter", "unshare", "firejail", "bwrap", "strace", "ltrace", "gdb", "valgrind", "perf",
    "systemd-run", "numactl", "chronic", "nocache", "cgexec", "torsocks", "proxychains", "proxychains4", "faketime",
    "xvfb-run", "dbus-run-session", "dbus-launch", "sg", "catchsegv", "rlwrap", "entr", "ifne", "tsp", "at", "batch",
    "sshpass", "caffeinate", "retry", "daemonize", "start-stop-daemon", "runcon", "capsh", "setcap", "newgrp",
    "lxc-execute", "lxc-attach", "schroot", "proot", "qemu-user", "box64", "wine", "with-contenv", "s6-setuidgid",
    "chpst", "setuidgid", "softlimit", "envdir", "envuidgid", "tini", "dumb-init", "gosu", "su-exec",
})
FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
FIND_WRITES = {"-fprint": 1, "-fprint0": 1, "-fls": 1, "-fprintf": 2}

SU = Options("flmpP", "cgGsw", long_flags=fs("--fast", "--login", "--preserve-environment", "--pty"),
               long_args=fs("--command", "--session-command", "--group", "--supp-group", "--shell",
                             "--whitelist-environment", "--user"),
               stop=HELP)
RUNUSER = Options(SU.flags, SU.with_arg + "u", long_flags=SU.long_flags, long_args=SU.long_args, stop=HELP)
