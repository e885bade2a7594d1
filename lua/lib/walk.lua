-- A walk over a directory tree of the workspace for the standard tools: depth first, names in order, `.git` and what
-- the .gitignore files say left out (unless `opts.all`), symbolic links listed but never followed (so a link loop
-- cannot trap it), and at most `opts.max_entries` entries visited (default 50,000) for at most `opts.seconds` (default
-- 15): a huge tree ends the walk with `stopped = "entries"` or `"time"` instead of running out of the call's budget.
--
--   local walk = require("walk")
--   local stats = walk.tree(".", { max_entries = 1000, max_depth = 3, all = false }, function(path, entry) ... end)
--   -- the callback gets the path (relative to the workspace, "./" never prepended) and the entry
--   -- {name, type = "file" | "directory" | "symlink" | "other", size, mtime}; returning "stop" ends the walk.
--   -- stats = { entries = n, dirs = n, stopped = "entries" | "time" | "visitor" | nil, errors = { "path: message" } }

local gitignore = require("gitignore")

local M = {}

M.MAX_ENTRIES = 50000
M.SECONDS = 15

-- The message for a walk that stopped early (nil when it did not).
function M.stopped_note(stats)
  if stats.stopped == "entries" then
    return string.format("[the search stopped after %d entries; search a smaller directory (path)]", stats.entries)
  elseif stats.stopped == "time" then
    return string.format("[the search stopped after %d s and %d entries; search a smaller directory (path)]",
      stats.seconds, stats.entries)
  end
  return nil
end

local function join(dir, name)
  if dir == "." or dir == "" then return name end
  return dir .. "/" .. name
end
M.join = join

-- The rules of `dir`/.gitignore, or nil when it has none (or it cannot be read).
local function rules_of(dir, rel)
  local data = panto.read_file(join(dir, ".gitignore"))
  if not data then return nil end
  return gitignore.parse(data, rel)
end

function M.tree(root, opts, visit)
  opts = opts or {}
  local max = opts.max_entries or M.MAX_ENTRIES
  local seconds = opts.seconds or M.SECONDS
  local deadline = os.time() + seconds
  local stats = { entries = 0, dirs = 0, errors = {}, seconds = seconds }
  local stack = {}
  -- Paths are matched against .gitignore rules relative to the walk's root.
  local function recurse(dir, rel, depth)
    local entries, err = panto.list_dir(dir, { details = true })
    if not entries then
      stats.errors[#stats.errors + 1] = dir .. ": " .. tostring(err)
      return
    end
    stats.dirs = stats.dirs + 1
    local pushed = false
    if not opts.all then
      local rules = rules_of(dir, rel)
      if rules then
        stack[#stack + 1] = rules
        pushed = true
      end
    end
    for _, e in ipairs(entries) do
      if stats.stopped then break end
      local is_dir = e.type == "directory"
      local rel_path = rel == "" and e.name or (rel .. "/" .. e.name)
      local skip = false
      if not opts.all then
        skip = e.name == ".git" or gitignore.ignored(stack, rel_path, is_dir)
      end
      if not skip then
        if stats.entries >= max then
          stats.stopped = "entries"
          break
        end
        if stats.entries % 64 == 0 and os.time() > deadline then
          stats.stopped = "time"
          break
        end
        stats.entries = stats.entries + 1
        local path = join(dir, e.name)
        if visit(path, e) == "stop" then
          stats.stopped = "visitor"
          break
        end
        if is_dir and (opts.max_depth == nil or depth < opts.max_depth) then recurse(path, rel_path, depth + 1) end
      end
    end
    if pushed then stack[#stack] = nil end
  end
  recurse(root, "", 1)
  return stats
end

return M
