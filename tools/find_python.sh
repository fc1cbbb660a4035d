# find_python 3.9 -> path of pyenv's python 3.9 (pyenv prefix, else ~/.pyenv/versions/3.9.*).
find_python() {
  local p
  p="$(pyenv prefix "$1" 2>/dev/null)/bin/python"
  if [ ! -x "$p" ]; then
    p=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$1".*/bin/python 2>/dev/null | sort -V | tail -n 1)
  fi
  echo "$p"
}
