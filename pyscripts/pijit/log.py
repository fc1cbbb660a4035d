"""`mindspore.log`: MindSpore's logging module. debug/info/warning/error/critical (and exception)
write one line per message to stderr in MindSpore's format,
    [WARNING] ME(<pid>:<thread id>,<process name>):<YYYY-MM-DD-HH:MM:SS.mmm.uuu> [<file>:<line>] <message>
when the level is at or above GLOG_v (0 DEBUG, 1 INFO, 2 WARNING by default, 3 ERROR, 4
CRITICAL), read at each call as MindSpore reads it at start; get_level and get_log_config report the
settings."""
import datetime
import multiprocessing
import os
import sys
import threading
import traceback

from pijit._toplevel2 import get_level, get_log_config  # noqa: F401

__all__ = ["get_level", "get_log_config", "debug", "info", "warning", "error", "critical",
           "exception"]

_NAMES = {0: "DEBUG", 1: "INFO", 2: "WARNING", 3: "ERROR", 4: "CRITICAL"}


def _caller():
    # the first frame outside this module
    f = sys._getframe(1)
    here = os.path.abspath(__file__)
    while f is not None and os.path.abspath(f.f_code.co_filename) == here:
        f = f.f_back
    if f is None:
        return "?", 0
    return os.path.basename(f.f_code.co_filename), f.f_lineno


def _emit(level, msg, args):
    if level < int(get_level()):
        return
    text = (str(msg) % args) if args else str(msg)
    now = datetime.datetime.now()
    stamp = now.strftime("%Y-%m-%d-%H:%M:%S") + ".%03d.%03d" % (now.microsecond // 1000,
                                                                  now.microsecond % 1000)
    name, line = _caller()
    sys.stderr.write("[%s] ME(%d:%d,%s):%s [%s:%d] %s\n" % (
        _NAMES[level], os.getpid(), threading.get_ident(), multiprocessing.current_process().name,
        stamp, name, line, text))
    sys.stderr.flush()


def debug(msg, *args, **kwargs):
    """Logs msg % args at DEBUG (GLOG_v=0)."""
    _emit(0, msg, args)


def info(msg, *args, **kwargs):
    """Logs msg % args at INFO (GLOG_v <= 1)."""
    _emit(1, msg, args)


def warning(msg, *args, **kwargs):
    """Logs msg % args at WARNING (GLOG_v <= 2, the default)."""
    _emit(2, msg, args)


def error(msg, *args, **kwargs):
    """Logs msg % args at ERROR (GLOG_v <= 3)."""
    _emit(3, msg, args)


def critical(msg, *args, **kwargs):
    """Logs msg % args at CRITICAL."""
    _emit(4, msg, args)


def exception(msg, *args, **kwargs):
    """Logs msg % args at ERROR followed by the traceback of the exception being handled."""
    _emit(3, msg, args)
    if int(get_level()) <= 3 and sys.exc_info()[0] is not None:
        sys.stderr.write(traceback.format_exc())
