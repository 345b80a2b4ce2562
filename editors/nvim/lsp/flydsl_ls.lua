-- flydsl-ls for Neovim 0.11+: put this directory on 'runtimepath' (or copy this file to
-- ~/.config/nvim/lsp/flydsl_ls.lua), then call vim.lsp.enable('flydsl_ls').
-- Override any field with vim.lsp.config('flydsl_ls', { ... }).
--
-- In attached buffers, on_attach adds buffer-local commands; the first four run the server's
-- workspace/executeCommand commands through client:exec_cmd:
--   :FlydslCompile [example] [arch]   compile a `# flydsl: example` function (default: the first)
--   :FlydslShowIsa [example] [arch]   compile and open the ISA of its first kernel
--   :FlydslLaunch [example] [arch]    compile and launch it (needs a ROCm GPU)
--   :FlydslVerifyFix                  compile before and after the fix under the cursor
--   :FlydslMigrate [function]         every fix (unsafe included) in the kernel under the cursor
--                                     (or FUNCTION) and the helpers only it uses; compiled
--                                     before and after first when the file has examples
--   :FlydslRule                       open the rule page of the finding under the cursor
-- The last result (a table, see docs/compile.md) is kept in b:flydsl_result. Files the
-- server shows (the ISA, a verifyFix diff) and rule pages open read-only in a split.

local commands = {
  FlydslCompile = { command = 'flydsl-ls.compile', desc = 'flydsl-ls: compile a kernel example' },
  FlydslShowIsa = { command = 'flydsl-ls.showIsa', desc = 'flydsl-ls: compile and show the ISA' },
  FlydslLaunch = { command = 'flydsl-ls.launch', desc = 'flydsl-ls: compile and launch a kernel example' },
  FlydslVerifyFix = { command = 'flydsl-ls.verifyFix', desc = 'flydsl-ls: verify the fix under the cursor by compiling' },
}

local function given(value)
  return value ~= nil and value ~= vim.NIL and value ~= ''
end

--- Open a file the server wrote (ISA, IR, a verifyFix diff) or a rule page read-only
--- (nomodifiable, buftype=nofile) in a split beside the current window, whose buffer stays
--- as it was. A window already showing such a file is reused: splits do not pile up.
local function open_readonly(path, focus)
  local buf = vim.fn.bufadd(path)
  vim.bo[buf].swapfile = false
  vim.fn.bufload(buf)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].modifiable = false
  vim.bo[buf].readonly = true
  vim.b[buf].flydsl_artifact = true
  local target
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local shown = vim.api.nvim_win_get_buf(win)
    if shown == buf or vim.b[shown].flydsl_artifact then target = win break end
  end
  if target then
    vim.api.nvim_win_set_buf(target, buf)
  else
    target = vim.api.nvim_open_win(buf, false, { split = 'right', win = 0 })
  end
  if focus then vim.api.nvim_set_current_win(target) end
end

--- The flydsl-ls finding under the cursor, as the server sent it (for verifyFix).
local function diagnostic_at_cursor(bufnr)
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  for _, d in ipairs(vim.diagnostic.get(bufnr, { lnum = row - 1 })) do
    local lsp = d.user_data and d.user_data.lsp
    if lsp and d.source == 'flydsl-ls' and d.col <= col and col <= (d.end_col or d.col) then
      return lsp
    end
  end
end

--- :FlydslMigrate [function]: the function named, else the kernel under the cursor (the
--- server's refactor.rewrite.migrateKernel code action there).
local function migrate(client, bufnr, opts)
  if not given(opts.fargs[1]) then
    vim.lsp.buf.code_action({
      context = { only = { 'refactor.rewrite.migrateKernel.flydsl-ls' }, diagnostics = {} },
      apply = true,
    })
    return
  end
  local arguments = { vim.uri_from_bufnr(bufnr), vim.NIL, opts.fargs[1] }
  client:exec_cmd({ title = 'FlydslMigrate', command = 'flydsl-ls.migrateKernel', arguments = arguments }, { bufnr = bufnr },
    function(err, result)
      if err then
        vim.notify('flydsl-ls: flydsl-ls.migrateKernel failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      elseif vim.api.nvim_buf_is_valid(bufnr) then
        vim.b[bufnr].flydsl_result = result
      end
    end)
end

--- :FlydslRule: the page the finding's codeDescription links to, a file installed with
--- flydsl-ls (flydsl_ls/data/rules/FLYnnn.md).
local function open_rule(bufnr)
  local lsp = diagnostic_at_cursor(bufnr)
  local href = lsp and lsp.codeDescription and lsp.codeDescription.href
  if not given(href) then
    vim.notify('flydsl-ls: no flydsl-ls finding under the cursor', vim.log.levels.WARN)
    return
  end
  open_readonly(vim.uri_to_fname(href), true)
end

local function run(client, bufnr, name, opts)
  local spec = commands[name]
  local argument = { uri = vim.uri_from_bufnr(bufnr) }
  if spec.command == 'flydsl-ls.verifyFix' then
    argument.diagnostic = diagnostic_at_cursor(bufnr)
    if not argument.diagnostic then
      vim.notify('flydsl-ls: no flydsl-ls finding under the cursor', vim.log.levels.WARN)
      return
    end
  else
    argument.example = opts.fargs[1]
    argument.arch = opts.fargs[2]
  end
  client:exec_cmd({ title = name, command = spec.command, arguments = { argument } }, { bufnr = bufnr }, function(err, result)
    if err then
      vim.notify(('flydsl-ls: %s failed: %s'):format(spec.command, err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    if vim.api.nvim_buf_is_valid(bufnr) then
      vim.b[bufnr].flydsl_result = result
    end
    -- The server shows its message (window/showMessage) and, for showIsa, asks Neovim to
    -- open the ISA (window/showDocument); open it here only if that did not happen.
    if spec.command == 'flydsl-ls.showIsa' and result and result.ok and not given(result.shown) then
      local kernel = result.kernels and result.kernels[1]
      local isa = kernel and kernel.files and kernel.files.isa
      if given(isa) then open_readonly(isa, true) end
    end
  end)
end

---@type vim.lsp.Config
return {
  cmd = { 'flydsl-ls', 'serve' },
  filetypes = { 'python' },
  root_markers = { 'pyproject.toml', 'setup.py', 'setup.cfg', 'requirements.txt', '.git' },
  -- Editor settings go on top of [tool.flydsl-ls] in the nearest pyproject.toml.
  -- Keys: select, ignore, targetArch, flydslVersion, logLevel, diagnosticsDelay (ms),
  -- compileTimeout (s), inlayHints (default true). vim.empty_dict(): an empty table would be sent as a JSON list.
  init_options = vim.empty_dict(),
  settings = {
    ['flydsl-ls'] = vim.empty_dict(),
  },
  handlers = {
    -- The server shows the files it wrote (the ISA of :FlydslShowIsa, a verifyFix diff):
    -- read-only in a split, not in place of the kernel as Neovim's default would. A file
    -- being edited (the example "Add compile example" just wrote) is shown in place, by
    -- Neovim's default: its window, the cursor on the selection.
    ['window/showDocument'] = function(err, params, ctx)
      local editing = not err and vim.fn.bufnr(vim.uri_to_fname(params.uri))
      if err or params.external or (editing ~= -1 and vim.api.nvim_buf_is_loaded(editing) and vim.bo[editing].buftype == '') then
        return vim.lsp.handlers['window/showDocument'](err, params, ctx)
      end
      open_readonly(vim.uri_to_fname(params.uri), params.takeFocus)
      return { success = true }
    end,
  },
  on_attach = function(client, bufnr)
    for name, spec in pairs(commands) do
      vim.api.nvim_buf_create_user_command(bufnr, name, function(opts)
        run(client, bufnr, name, opts)
      end, { nargs = '*', desc = spec.desc })
    end
    vim.api.nvim_buf_create_user_command(bufnr, 'FlydslRule', function() open_rule(bufnr) end,
      { nargs = 0, desc = 'flydsl-ls: open the rule page of the finding under the cursor' })
    vim.api.nvim_buf_create_user_command(bufnr, 'FlydslMigrate', function(opts) migrate(client, bufnr, opts) end,
      { nargs = '?', desc = 'flydsl-ls: apply every fix in a kernel and the helpers only it uses' })
  end,
}
