import { existsSync, lstatSync, readFileSync, readlinkSync } from 'node:fs';

/*
 * What a sandboxed command sees of the host: read-only, and only what programs need to run.
 * Not `/` (it showed /root, /home, /etc/shadow, the run directory, every other workspace:
 * issue 24, route 4). The workspace, /tmp and the hidden directories are added per command
 * (bwrap-spec.ts).
 */

/** System directories, bound read-only (or re-created as the symlinks they are, e.g. /bin -> usr/bin). */
const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/**
 * The part of /etc programs read: the dynamic linker's cache, Debian's alternatives (many
 * /usr/bin tools are links through it), time zone, TLS roots (`/etc/ssl/certs`, never
 * `/etc/ssl/private`), name service switch, protocol tables. No shadow, no sudoers, no ssh
 * keys, no system gitconfig or npmrc (programs must not pick up host configuration either).
 */
const ETC_FILES = [
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/alternatives',
  '/etc/localtime',
  '/etc/timezone',
  '/etc/nsswitch.conf',
  '/etc/os-release',
  '/etc/debian_version',
  '/etc/protocols',
  '/etc/services',
  '/etc/mime.types',
  '/etc/locale.alias',
  '/etc/inputrc',
  '/etc/terminfo',
  '/etc/ssl/certs',
  '/etc/ssl/openssl.cnf',
  '/etc/ca-certificates',
  '/etc/ca-certificates.conf',
  '/etc/pki/tls/certs',
  '/etc/pki/ca-trust',
  '/etc/crypto-policies',
];

/** Name resolution, only when a plan lets commands reach the network. */
const NETWORK_ETC_FILES = ['/etc/resolv.conf', '/etc/hosts', '/etc/host.conf', '/etc/gai.conf'];

/** Without network only the loopback exists: `localhost` must still resolve. */
const LOOPBACK_HOSTS = '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n';

let systemArgs: string[] | undefined;

/** `--ro-bind` / `--symlink` arguments of the system directories (computed once per thread). */
export function systemViewArgs(): string[] {
  if (systemArgs !== undefined) return systemArgs;
  const args: string[] = [];
  for (const dir of SYSTEM_DIRS) {
    try {
      const stat = lstatSync(dir);
      if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(dir), dir);
      else if (stat.isDirectory()) args.push('--ro-bind', dir, dir);
    } catch {
      // not on this system
    }
  }
  systemArgs = args;
  return args;
}

/** `--ro-bind-try` arguments of the /etc files (missing ones are skipped by bubblewrap). */
export function etcArgs(network: boolean): string[] {
  return (network ? [...ETC_FILES, ...NETWORK_ETC_FILES] : ETC_FILES).flatMap((f) => ['--ro-bind-try', f, f]);
}

/** Files the sandbox gets as data (`--ro-bind-data`): built here, never bound from the host. */
export function etcData(network: boolean): Array<{ path: string; text: string }> {
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;
  const files = [
    {
      path: '/etc/passwd',
      text: accountLines('/etc/passwd', [0, uid, 65534], `forkcache:x:${uid}:${gid}::/tmp:/bin/sh`),
    },
    { path: '/etc/group', text: accountLines('/etc/group', [0, gid, 65534], `forkcache:x:${gid}:`) },
  ];
  if (!network) files.push({ path: '/etc/hosts', text: LOOPBACK_HOSTS });
  return files;
}

/**
 * The host's `passwd` or `group` lines of a few ids only (root, ours, nobody), password fields
 * set to `x` and member lists emptied: `id`, `ls -l` and `whoami` work, the host's other
 * accounts are not listed.
 */
function accountLines(file: string, ids: number[], fallback: string): string {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    // none on this host: the fallback line alone
  }
  const wanted = new Set(ids);
  const isGroup = file.endsWith('group');
  const lines = text
    .split('\n')
    .map((line) => line.split(':'))
    .filter((f) => f.length >= (isGroup ? 3 : 7) && wanted.has(Number(f[2])))
    .map((f) => (isGroup ? [f[0], 'x', f[2], ''] : [f[0], 'x', ...f.slice(2)]).join(':'));
  if (!lines.some((l) => Number(l.split(':')[2]) === ids[1])) lines.push(fallback);
  return `${[...new Set(lines)].join('\n')}\n`;
}

/*
 * A fresh /proc still shows the host's kernel: its symbols and modules (addresses for an
 * exploit), keyrings, timers and scheduler state of every host process, the boot command line,
 * memory and I/O maps, the host's disks. Each such file is covered with /dev/null (empty to read;
 * `--dev-bind`, as a plain bind is `nodev` and would refuse to open), each such directory with
 * an empty read-only tmpfs, as container runtimes do. What stays: cpuinfo, meminfo, stat,
 * loadavg, uptime, version, vmstat and /proc/sys (read-only without capabilities), which
 * ordinary programs read (ps, free, node's os module); /proc/net is the sandbox's own.
 */
const PROC_FILES = [
  'kallsyms',
  'kcore',
  'modules',
  'keys',
  'key-users',
  'kmsg',
  'kpagecgroup',
  'kpagecount',
  'kpageflags',
  'timer_list',
  'timer_stats',
  'sched_debug',
  'latency_stats',
  'cmdline',
  'config.gz',
  'iomem',
  'ioports',
  'slabinfo',
  'vmallocinfo',
  'pagetypeinfo',
  'zoneinfo',
  'buddyinfo',
  'interrupts',
  'softirqs',
  'diskstats',
  'partitions',
  'swaps',
  'mdstat',
  'locks',
  'devices',
  'consoles',
  'mtrr',
  'dma',
  'misc',
  'sysrq-trigger',
];
const PROC_DIRS = ['acpi', 'asound', 'scsi', 'irq', 'bus', 'driver', 'tty', 'pressure', 'sysvipc'];

/** The masks of /proc that apply here (only what exists: bwrap cannot create a file in /proc). */
export function procMaskArgs(): string[] {
  const files = PROC_FILES.filter((f) => existsSync(`/proc/${f}`));
  const dirs = PROC_DIRS.filter((d) => existsSync(`/proc/${d}`));
  return [
    ...files.flatMap((f) => ['--dev-bind', '/dev/null', `/proc/${f}`]),
    ...dirs.flatMap((d) => ['--tmpfs', `/proc/${d}`, '--remount-ro', `/proc/${d}`]),
  ];
}
