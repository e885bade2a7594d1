-- .gitignore rules, as the standard tools (find, grep, ls) honour them while they walk a tree.
--
--   local gitignore = require("gitignore")
--   local rules = gitignore.parse(text, "src")          -- the rules of src/.gitignore
--   local ignored = gitignore.ignored({ rules }, "src/build/x.o", false)
--
-- The syntax of git: blank lines and `#` comments are skipped, `!` negates, a trailing `/` matches directories only, a
-- `/` at the start or in the middle anchors the pattern to the directory of its .gitignore (otherwise it matches a
-- name at any depth below it), `*`, `?`, `[...]` and `**` as in glob.lua. The last matching rule wins; rules of a
-- deeper .gitignore come after the ones above it.

local glob = require("glob")

local M = {}

-- The rules of one .gitignore file, found in directory `base` ("" for the root; no trailing slash).
function M.parse(text, base)
  local rules = {}
  for raw in (text .. "\n"):gmatch("([^\n]*)\n") do
    local line = raw:gsub("\r$", "")
    -- Trailing spaces are ignored unless escaped.
    line = line:gsub("([^\\])%s+$", "%1")
    if line ~= "" and line:sub(1, 1) ~= "#" then
      local negate = false
      if line:sub(1, 1) == "!" then
        negate = true
        line = line:sub(2)
      elseif line:sub(1, 2) == "\\!" or line:sub(1, 2) == "\\#" then
        line = line:sub(2)
      end
      local dir_only = line:sub(-1) == "/"
      if dir_only then line = line:sub(1, -2) end
      local anchored = line:find("/", 1, true) ~= nil
      if line:sub(1, 1) == "/" then line = line:sub(2) end
      if line ~= "" then
        local rule = { negate = negate, dir_only = dir_only, base = base }
        if not anchored and not glob.is_glob(line) then
          -- The common cases are plain names (node_modules) and extensions (*.log): compared, not matched.
          rule.name = line
        elseif not anchored and line:match("^%*%.[%w_%-]+$") then
          rule.suffix = line:sub(2)
        else
          local pattern = anchored and line or ("**/" .. line)
          rule.match = glob.compile(pattern)
          -- Everything below a matching directory is matched too.
          rule.below = glob.compile(pattern .. "/**")
        end
        rules[#rules + 1] = rule
      end
    end
  end
  return rules
end

-- Whether `path` (relative to the walk's root, `/`-separated) is ignored by the rule sets in `stack` (outermost
-- first). `is_dir` tells whether it is a directory.
function M.ignored(stack, path, is_dir)
  local result = false
  for _, rules in ipairs(stack) do
    for _, r in ipairs(rules) do
      local rel
      if r.base == "" then rel = path
      elseif path:sub(1, #r.base + 1) == r.base .. "/" then rel = path:sub(#r.base + 2)
      end
      if rel then
        local hit
        if r.name or r.suffix then
          local name = rel:match("([^/]+)$")
          if r.name then hit = name == r.name else hit = name:sub(-#r.suffix) == r.suffix end
          hit = hit and (is_dir or not r.dir_only)
          -- A plain name also matches any directory on the way (a/node_modules/x).
          if not hit and r.name and ("/" .. rel .. "/"):find("/" .. r.name .. "/", 1, true) then
            hit = rel:match("([^/]+)$") ~= r.name
          end
        else
          hit = r.match(rel) and (is_dir or not r.dir_only)
          if not hit and r.below(rel) then hit = true end
        end
        if hit then result = not r.negate end
      end
    end
  end
  return result
end

return M
