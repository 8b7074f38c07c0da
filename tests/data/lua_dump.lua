-- Load a Lua map file (a chunk returning one table) and print every leaf as one line
-- "path<TAB>value", keys sorted (numbers before strings), numbers normalised: a whole value prints
-- as an integer, any other as %.17g, so 3 and 3.0 compare equal and every double is exact.
-- Strings print with %q. An empty table prints as {}. Runs under Lua 5.4 and LuaJIT (LÖVE's Lua).
local map = assert(loadfile(arg[1]))()

local function key_less(a, b)
  local ta, tb = type(a), type(b)
  if ta ~= tb then return ta == "number" end
  return a < b
end

local function number(v)
  if v == math.floor(v) and math.abs(v) < 2^53 then
    return string.format("%d", v)
  end
  return string.format("%.17g", v)
end

local function dump(path, value)
  local t = type(value)
  if t == "table" then
    local keys = {}
    for k in pairs(value) do keys[#keys + 1] = k end
    if #keys == 0 then io.write(path, "\t{}\n") return end
    table.sort(keys, key_less)
    for _, k in ipairs(keys) do
      local part = type(k) == "number" and ("[" .. number(k) .. "]") or ("." .. k)
      dump(path .. part, value[k])
    end
  elseif t == "number" then
    io.write(path, "\t", number(value), "\n")
  elseif t == "string" then
    io.write(path, "\t", string.format("%q", value):gsub("\\\n", "\\n"), "\n")
  else
    io.write(path, "\t", tostring(value), "\n")
  end
end

dump("map", map)
