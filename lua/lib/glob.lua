-- Glob patterns as the standard tools read them (find, and the .gitignore rules): `*` any run of characters but `/`,
-- `?` one character but `/`, `[abc]`, `[a-z]`, `[!a]` a character class, `{a,b}` alternatives, `**` any run of
-- directories (`**/` also none). Compiled to anchored Lua patterns (one per expansion of the braces and of `**/`);
-- `compile` returns a function path -> true/false.

local M = {}

local MAX_EXPANSIONS = 64

-- Expand the first {a,b,...} of `p` (innermost braces are handled by the recursion), at most MAX_EXPANSIONS results.
local function expand_braces(p, out)
  out = out or {}
  local open = p:find("{", 1, true)
  if not open then
    out[#out + 1] = p
    return out
  end
  local depth, close = 0, nil
  for k = open, #p do
    local c = p:sub(k, k)
    if c == "{" then depth = depth + 1 elseif c == "}" then
      depth = depth - 1
      if depth == 0 then close = k break end
    end
  end
  if not close then
    out[#out + 1] = p
    return out
  end
  local body, alts, start, d = p:sub(open + 1, close - 1), {}, 1, 0
  for k = 1, #body do
    local c = body:sub(k, k)
    if c == "{" then d = d + 1 elseif c == "}" then d = d - 1
    elseif c == "," and d == 0 then
      alts[#alts + 1] = body:sub(start, k - 1)
      start = k + 1
    end
  end
  alts[#alts + 1] = body:sub(start)
  for _, a in ipairs(alts) do
    if #out >= MAX_EXPANSIONS then break end
    expand_braces(p:sub(1, open - 1) .. a .. p:sub(close + 1), out)
  end
  return out
end

-- "**/" matches zero or more directories: one variant without it, one with any run of directories.
local function expand_globstar(p, out)
  local at = p:find("**/", 1, true)
  if not at or #out >= MAX_EXPANSIONS then
    out[#out + 1] = p
    return out
  end
  local before, after = p:sub(1, at - 1), p:sub(at + 3)
  expand_globstar(before .. after, out)
  expand_globstar(before .. "\0" .. after, out)  -- \0 marks "any directories/" for to_lua
  return out
end

local MAGIC = "[%^%$%(%)%%%.%[%]%*%+%-%?]"

-- One glob (no braces, `**/` marked as \0) as an anchored Lua pattern.
local function to_lua(g)
  local out, i, n = { "^" }, 1, #g
  while i <= n do
    local c = g:sub(i, i)
    if c == "\0" then
      out[#out + 1] = ".*/"
      i = i + 1
    elseif c == "*" then
      if g:sub(i + 1, i + 1) == "*" then
        out[#out + 1] = ".*"
        i = i + 2
      else
        out[#out + 1] = "[^/]*"
        i = i + 1
      end
    elseif c == "?" then
      out[#out + 1] = "[^/]"
      i = i + 1
    elseif c == "[" then
      local close = g:find("]", i + 2, true)
      if not close then
        out[#out + 1] = "%["
        i = i + 1
      else
        local body = g:sub(i + 1, close - 1)
        local neg = body:sub(1, 1) == "!" or body:sub(1, 1) == "^"
        if neg then body = body:sub(2) end
        -- Escape Lua's magic characters inside the class, keeping a-z ranges.
        body = body:gsub("%%", "%%%%"):gsub("%]", "%%]"):gsub("%^", "%%^")
        out[#out + 1] = "[" .. (neg and "^" or "") .. body .. "]"
        i = close + 1
      end
    elseif c == "\\" and i < n then
      out[#out + 1] = g:sub(i + 1, i + 1):gsub(MAGIC, "%%%0")
      i = i + 2
    else
      out[#out + 1] = (c:gsub(MAGIC, "%%%0"))
      i = i + 1
    end
  end
  out[#out + 1] = "$"
  return table.concat(out)
end

-- A matcher for `pattern`: function(path) -> boolean.
function M.compile(pattern)
  local patterns = {}
  for _, b in ipairs(expand_braces(pattern)) do
    for _, g in ipairs(expand_globstar(b, {})) do patterns[#patterns + 1] = to_lua(g) end
  end
  return function(path)
    for _, lp in ipairs(patterns) do
      if path:find(lp) then return true end
    end
    return false
  end
end

-- True when `s` holds glob syntax.
function M.is_glob(s)
  return s:find("[%*%?%[{]") ~= nil
end

return M
