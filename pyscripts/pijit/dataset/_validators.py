"""Argument checks with MindSpore's exception types and messages (they name the parameter)."""
import os

INT32_MAX = 2147483647
UINT32_MAX = 4294967295
INT64_MAX = 9223372036854775807


def type_check(arg, types, name):
    shown = '""' if repr(arg) == repr("") else arg
    if int in types and bool not in types and isinstance(arg, bool):
        raise TypeError("Argument %s with value %s is not of type %s, but got %s."
                        % (name, shown, list(types), type(arg)))
    if not isinstance(arg, types):
        raise TypeError("Argument %s with value %s is not of type %s, but got %s."
                        % (name, shown, list(types), type(arg)))


def check_value(value, valid_range, name=""):
    if value < valid_range[0] or value > valid_range[1]:
        raise ValueError("Input %sis not within the required interval of [%s, %s]."
                         % (name + " " if name else "", valid_range[0], valid_range[1]))


def check_pos_int32(value, name):
    type_check(value, (int,), name)
    check_value(value, [1, INT32_MAX], name)


def check_num_parallel_workers(value):
    type_check(value, (int,), "num_parallel_workers")
    n = os.cpu_count() or 1
    if value < 1 or value > max(n, 1):
        raise ValueError("num_parallel_workers exceeds the boundary between 1 and %d!" % n)


def check_num_samples(value):
    type_check(value, (int,), "num_samples")
    if value < 0 or value > INT64_MAX:
        raise ValueError("num_samples exceeds the boundary between 0 and %d(INT64_MAX)!"
                         % INT64_MAX)


def check_columns(columns, name):
    type_check(columns, (list, str), name)
    if isinstance(columns, str):
        if not columns:
            raise ValueError("%s should not be an empty str." % name)
        return
    if not columns:
        raise ValueError("%s should not be empty." % name)
    for i, c in enumerate(columns):
        if not c:
            raise ValueError("%s[%d] should not be empty." % (name, i))
        type_check(c, (str,), "%s[%d]" % (name, i))
    if len(set(columns)) != len(columns):
        raise ValueError("Every column name should not be same with others in column_names.")


def to_list(columns):
    if columns is None:
        return None
    return [columns] if isinstance(columns, str) else list(columns)


def check_dir(path):
    type_check(path, (str,), "dataset_dir")
    if not os.path.isdir(path) or not os.access(path, os.R_OK):
        raise ValueError("The folder %s does not exist or is not a directory or permission denied!"
                         % path)


def check_valid_str(value, valid, name):
    type_check(value, (str,), name)
    if value not in valid:
        raise ValueError("Input %s is not within the valid set of %s." % (name, str(valid)))


def check_source_options(num_samples, num_parallel_workers, shuffle, sampler, num_shards,
                         shard_id, sharding_check=True):
    """The options every source shares (MindSpore's check_sampler_shuffle_shard_options)."""
    if num_samples is not None:
        check_num_samples(num_samples)
    if num_parallel_workers is not None:
        check_num_parallel_workers(num_parallel_workers)
    if shuffle is not None:
        type_check(shuffle, (bool,), "shuffle")
    for name, v in (("num_shards", num_shards), ("shard_id", shard_id)):
        if v is not None:
            type_check(v, (int,), name)
    if sampler is not None:
        if shuffle is not None:
            raise RuntimeError("sampler and shuffle cannot be specified at the same time.")
        if num_shards is not None or shard_id is not None:
            raise RuntimeError("sampler and sharding cannot be specified at the same time.")
    if num_shards is not None:
        check_pos_int32(num_shards, "num_shards")
        if shard_id is None:
            raise RuntimeError("num_shards is specified and currently requires shard_id as well.")
        check_value(shard_id, [0, num_shards - 1], "shard_id")
    if num_shards is None and shard_id is not None:
        raise RuntimeError("shard_id is specified but num_shards is not.")
