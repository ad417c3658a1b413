# py_embed.cmake: turn py_bridge.py into a C header holding it as one
# NUL-terminated char array, dkb__py_bridge_src (for dkb's build step and
# the worker's shim). cmake -DIN=py_bridge.py -DOUT=py_bridge_src.h -P py_embed.cmake
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}.tmp" "/* generated from src/harness/python/py_bridge.py by py_embed.cmake: do not edit */\n"
  "static const char dkb__py_bridge_src[] = {\n${bytes}0x00};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
