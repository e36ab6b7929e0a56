// SPDX-License-Identifier: GPL-2.0
/*
 * init for the guests of other architectures, 'make check-matrix' (i386)
 * and 'make check-arm64': there is no busybox for them here, so this
 * mounts the test filesystems, runs each program named on the command
 * line (argv, from the kernel's init arguments) on ext4, xfs and tmpfs
 * (or the filesystems fnr.fs=a,b names, hugetmpfs among them) with
 * FNR_DIR set, prints the same FNR-* lines as scripts/guest/init
 * and powers off. The lines go to /dev/ttyS1 (x86) or, where there is
 * no second serial port, to the virtio console /dev/hvc0 (arm64 virt).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>

static int mnt(const char *src, const char *dir, const char *type,
	       const char *opts)
{
	mkdir(dir, 0755);
	if (!mount(src, dir, type, 0, opts))
		return 0;
	printf("FNR-ERROR mount %s on %s (%s) failed\n", src, dir, type);
	return -1;
}

static int run(const char *prog, const char *fs)
{
	char path[256], dir[64], env[80];
	int status;
	pid_t pid;

	snprintf(path, sizeof(path), "/fnr/tests/%s", prog);
	snprintf(dir, sizeof(dir), "/mnt/%s", fs);
	snprintf(env, sizeof(env), "FNR_DIR=%s", dir);
	printf("# FNR-RUN-START %s %s\n", prog, fs);
	fflush(stdout);
	pid = fork();
	if (!pid) {
		char *argv[] = { path, NULL };
		char *envp[] = { env, "FNR_SKIP_CONTROL=1", "FNR_INTRUSIVE=1",
				 NULL };

		alarm(300);	/* the host's timeout is the backstop */
		execve(path, argv, envp);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		status = 1 << 8;
	printf("FNR-RUN %s %s rc=%d\n", prog, fs,
	       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	fflush(stdout);
	return 0;
}

/* fnr.fs=a,b,... on the kernel command line, into fss[]; or the default. */
static int filesystems(char *buf, size_t len, const char **fss, int max)
{
	char *p, *tok;
	int fd, n = 0;
	ssize_t got;

	fd = open("/proc/cmdline", O_RDONLY);
	got = fd < 0 ? -1 : read(fd, buf, len - 1);
	if (fd >= 0)
		close(fd);
	buf[got > 0 ? got : 0] = 0;
	p = strstr(buf, "fnr.fs=");
	if (!p) {
		fss[0] = "ext4";
		fss[1] = "xfs";
		fss[2] = "tmpfs";
		return 3;
	}
	p += strlen("fnr.fs=");
	p[strcspn(p, " \n")] = 0;
	for (tok = strtok(p, ","); tok && n < max; tok = strtok(NULL, ","))
		fss[n++] = tok;
	return n;
}

int main(int argc, char **argv)
{
	static char cmdline[4096];
	const char *fss[8];
	struct utsname u;
	int fd, i, j, nfs, rc;

	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	fd = open("/dev/ttyS1", O_WRONLY);
	if (fd < 0)
		fd = open("/dev/hvc0", O_WRONLY);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	uname(&u);
	printf("FNR-BEGIN job=static kernel=%s machine=%s\n", u.release,
	       u.machine);
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	mnt("tmpfs", "/tmp", "tmpfs", NULL);
	/* As scripts/guest/init; hugetmpfs only if fnr.fs= names it. */
	nfs = filesystems(cmdline, sizeof(cmdline), fss, 8);
	rc = mnt("/dev/vda", "/mnt/ext4", "ext4", NULL) ||
	     mnt("/dev/vdb", "/mnt/xfs", "xfs", NULL) ||
	     mnt("tmpfs", "/mnt/tmpfs", "tmpfs", "size=512m") ||
	     mnt("cgroup2", "/sys/fs/cgroup", "cgroup2", NULL);
	for (i = 0; !rc && i < nfs; i++)
		if (!strcmp(fss[i], "hugetmpfs"))
			rc = mnt("tmpfs", "/mnt/hugetmpfs", "tmpfs",
				 "size=512m,huge=always");
	if (!rc)
		for (i = 0; i < nfs; i++)
			for (j = 1; j < argc; j++)
				run(argv[j], fss[i]);
	sync();
	printf("FNR-END rc=%d\n", rc ? 1 : 0);
	fflush(stdout);
	reboot(RB_POWER_OFF);
	return 0;
}
