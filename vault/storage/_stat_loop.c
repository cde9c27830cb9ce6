/* vault.storage._stat_loop: the no-op sync's stat loop in C (issue 17).
 *
 * regular_stats(fd, names, max_size) -> bytes | None
 *
 * lstat's (fstatat with AT_SYMLINK_NOFOLLOW) every name (bytes) in the open folder `fd` and
 * returns their sizes, then their mtimes (ns), then their inodes, then their ctimes (ns), as
 * 4 * len(names) native
 * int64 values in one bytes object: what folders._packed makes of the same stats in Python.
 * None as soon as one name cannot be stat'ed, is not a regular file, or is larger than
 * `max_size` (the caller then lists the folder by its full rules). mtime, inode and ctime are
 * wrapped into int64 (two's complement, as folders.wrap64), so a file dated after 2262 or an
 * inode above 2^63 is a value SQLite's INTEGER holds. The loop runs without the GIL: a
 * folder's names are borrowed from a tuple this call owns.
 *
 * Why: at 10^6 notes a no-op sync is one lstat per note, and os.lstat's stat_result (21
 * fields, three of them computed as Python integers) costs as much again as the system call
 * (bench/profile_noop.py, BENCHMARKS.md). folders.py falls back to os.lstat when this module
 * was not built (no compiler at install; the build is optional) or RMH_NO_NATIVE is set.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#ifdef __APPLE__
#define MTIME_SEC(s) ((s).st_mtimespec.tv_sec)
#define MTIME_NSEC(s) ((s).st_mtimespec.tv_nsec)
#define CTIME_SEC(s) ((s).st_ctimespec.tv_sec)
#define CTIME_NSEC(s) ((s).st_ctimespec.tv_nsec)
#else
#define MTIME_SEC(s) ((s).st_mtim.tv_sec)
#define MTIME_NSEC(s) ((s).st_mtim.tv_nsec)
#define CTIME_SEC(s) ((s).st_ctim.tv_sec)
#define CTIME_NSEC(s) ((s).st_ctim.tv_nsec)
#endif

static PyObject *
regular_stats(PyObject *module, PyObject *args)
{
    (void)module;
    int fd;
    PyObject *names;
    long long max_size;
    if (!PyArg_ParseTuple(args, "iOL:regular_stats", &fd, &names, &max_size))
        return NULL;
    PyObject *owned = PySequence_Tuple(names);
    if (owned == NULL)
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(owned);
    if (n > PY_SSIZE_T_MAX / (Py_ssize_t)(4 * sizeof(int64_t))) {
        Py_DECREF(owned);
        return PyErr_NoMemory();
    }
    const char **paths = PyMem_Malloc((size_t)(n > 0 ? n : 1) * sizeof(char *));
    if (paths == NULL) {
        Py_DECREF(owned);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(owned, i);
        if (!PyBytes_Check(item)) {
            PyMem_Free(paths);
            Py_DECREF(owned);
            PyErr_SetString(PyExc_TypeError, "regular_stats: names must be bytes");
            return NULL;
        }
        paths[i] = PyBytes_AS_STRING(item);
        if (strlen(paths[i]) != (size_t)PyBytes_GET_SIZE(item)) {  /* as os.lstat says */
            PyMem_Free(paths);
            Py_DECREF(owned);
            PyErr_SetString(PyExc_ValueError, "regular_stats: embedded null byte");
            return NULL;
        }
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, 4 * n * (Py_ssize_t)sizeof(int64_t));
    if (out == NULL) {
        PyMem_Free(paths);
        Py_DECREF(owned);
        return NULL;
    }
    int64_t *sizes = (int64_t *)PyBytes_AS_STRING(out);
    int64_t *mtimes = sizes + n;
    int64_t *inodes = sizes + 2 * n;
    int64_t *ctimes = sizes + 3 * n;
    int regular = 1;
    Py_BEGIN_ALLOW_THREADS
    struct stat info;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (fstatat(fd, paths[i], &info, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(info.st_mode)
            || (long long)info.st_size > max_size) {
            regular = 0;
            break;
        }
        sizes[i] = (int64_t)info.st_size;
        /* unsigned arithmetic wraps mod 2^64: the exact sec * 10^9 + nsec, wrapped */
        mtimes[i] = (int64_t)((uint64_t)MTIME_SEC(info) * UINT64_C(1000000000)
                              + (uint64_t)MTIME_NSEC(info));
        inodes[i] = (int64_t)(uint64_t)info.st_ino;
        ctimes[i] = (int64_t)((uint64_t)CTIME_SEC(info) * UINT64_C(1000000000)
                              + (uint64_t)CTIME_NSEC(info));
    }
    Py_END_ALLOW_THREADS
    PyMem_Free(paths);
    Py_DECREF(owned);
    if (!regular) {
        Py_DECREF(out);
        Py_RETURN_NONE;
    }
    return out;
}

static PyMethodDef methods[] = {
    {"regular_stats", regular_stats, METH_VARARGS,
     "regular_stats(fd, names, max_size) -> bytes | None: sizes, mtimes (ns), inodes and "
     "ctimes (ns) of the regular files `names` (bytes) in the open folder `fd`, as "
     "4 * len(names) native "
     "int64; None when one is missing, not a regular file, or larger than max_size."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_stat_loop",
    "The no-op sync's stat loop in C (see vault/storage/folders.py).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__stat_loop(void)
{
    PyObject *m = PyModule_Create(&module);
    /* the columns regular_stats returns: folders.py uses no build that returns another count
     * (a stale build from before ctimes were added returned 3) */
    if (m != NULL && PyModule_AddIntConstant(m, "COLUMNS", 4) != 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
