-- flydsl-ls for Neovim 0.11+: put this directory on 'runtimepath' (or copy this file to
-- ~/.config/nvim/lsp/flydsl_ls.lua), then call vim.lsp.enable('flydsl_ls').
-- Override any field with vim.lsp.config('flydsl_ls', { ... }).
---@type vim.lsp.Config
return {
  cmd = { 'flydsl-ls', 'serve' },
  filetypes = { 'python' },
  root_markers = { 'pyproject.toml', 'setup.py', 'setup.cfg', 'requirements.txt', '.git' },
  -- Editor settings go on top of [tool.flydsl-ls] in the nearest pyproject.toml.
  -- Keys: select, ignore, targetArch, flydslVersion, logLevel, diagnosticsDelay (ms).
  init_options = {},
  settings = {
    ['flydsl-ls'] = {},
  },
}
