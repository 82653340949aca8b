/*
 * A stand-in for pyxis (NVIDIA's SPANK plugin that runs srun's tasks in containers) for the
 * Slurm lab: it registers pyxis's srun options, so the real srun accepts them, and records on
 * each task what srun passed, so that a test can check what orchestrate asked for. It runs no
 * container: the task runs on the node as it would without one.
 *
 * plugstack.conf: optional /path/pyxis_standin.so record_dir=/some/dir
 * Each task of a step that named --container-image writes <record_dir>/<job>.<step>.<task>
 * (one "option=value" line per option given) and gets PYXIS_STANDIN_IMAGE in its environment.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/spank.h>

/* The macro ends in a semicolon of its own. */
SPANK_PLUGIN(pyxis_standin, 1)

enum { kImage, kMounts, kWorkdir, kName, kEnv, kMountHome, kRemapRoot, kWritable, kOptions };

static const char *const kNames[kOptions] = {
    "container-image",      "container-mounts",      "container-workdir",
    "container-name",       "container-env",         "no-container-mount-home",
    "container-remap-root", "container-writable",
};
static char *values[kOptions];
static char record_dir[4096];

static int remember(int val, const char *optarg, int remote) {
  (void)remote;
  if (val < 0 || val >= kOptions) return -1;
  free(values[val]);
  values[val] = strdup(optarg ? optarg : "");
  return values[val] ? 0 : -1;
}

static struct spank_option options[kOptions + 1] = {
    {"container-image", "IMAGE", "[pyxis stand-in] the image the task runs in", 1, kImage,
     remember},
    {"container-mounts", "SRC:DST[:FLAGS][,...]", "[pyxis stand-in] bind mounts", 1, kMounts,
     remember},
    {"container-workdir", "PATH", "[pyxis stand-in] working directory inside", 1, kWorkdir,
     remember},
    {"container-name", "NAME", "[pyxis stand-in] a named container", 1, kName, remember},
    {"container-env", "NAME[,NAME...]", "[pyxis stand-in] variables the image may not override",
     1, kEnv, remember},
    {"no-container-mount-home", NULL, "[pyxis stand-in] do not mount the home directory", 0,
     kMountHome, remember},
    {"container-remap-root", NULL, "[pyxis stand-in] become root in the container", 0,
     kRemapRoot, remember},
    {"container-writable", NULL, "[pyxis stand-in] a writable container", 0, kWritable,
     remember},
    SPANK_OPTIONS_TABLE_END,
};

int slurm_spank_init(spank_t sp, int ac, char **av) {
  for (int i = 0; i < ac; ++i) {
    if (strncmp(av[i], "record_dir=", 11) == 0) {
      snprintf(record_dir, sizeof record_dir, "%s", av[i] + 11);
    }
  }
  for (int i = 0; i < kOptions; ++i) {
    if (spank_option_register(sp, &options[i]) != ESPANK_SUCCESS) {
      slurm_error("pyxis_standin: cannot register --%s", kNames[i]);
      return -1;
    }
  }
  return 0;
}

static int write_record(spank_t sp) {
  uint32_t job = 0, step = 0, task = 0;
  if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_TASK_GLOBAL_ID, &task) != ESPANK_SUCCESS) {
    return -1;
  }
  char path[4200];
  snprintf(path, sizeof path, "%s/%u.%u.%u", record_dir, job, step, task);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    slurm_error("pyxis_standin: cannot write %s: %s", path, strerror(errno));
    return -1;
  }
  FILE *out = fdopen(fd, "w");
  if (out == NULL) {
    close(fd);
    return -1;
  }
  for (int i = 0; i < kOptions; ++i) {
    if (values[i] != NULL) fprintf(out, "%s=%s\n", kNames[i], values[i]);
  }
  return fclose(out) == 0 ? 0 : -1;
}

/* In the task, just before it execs: what pyxis would act on, recorded. */
int slurm_spank_task_init(spank_t sp, int ac, char **av) {
  (void)ac;
  (void)av;
  if (!spank_remote(sp) || values[kImage] == NULL) return 0;
  spank_setenv(sp, "PYXIS_STANDIN_IMAGE", values[kImage], 1);
  if (record_dir[0] == '\0') return 0;
  return write_record(sp) == 0 ? 0 : -1;
}
