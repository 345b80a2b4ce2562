from flydsl_ls.cli import console

console()
