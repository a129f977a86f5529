# fish completion for agentjail(1). Installed by `make install` into
# $(PREFIX)/share/fish/vendor_completions.d/agentjail.fish.

function __agentjail_profiles
    agentjail profiles --json 2>/dev/null | string replace -rf '^    "name": "([^"]*)".*' '$1'
end

function __agentjail_sessions
    agentjail sessions --json 2>/dev/null | string replace -rf '^    "id": "([^"]*)".*' '$1'
end

set -l __aj_cmds run verify doctor profiles shim sessions show log net ps exec stop rm quarantine resume tui cache home config trust untrust diff apply discard checkpoint rollback

complete -c agentjail -f
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -l version -d 'print the version'
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -l help -d 'print usage'
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -a run -d 'run a command in a jail'
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -a verify -d 'run the integrity battery in a jail'
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -a doctor -d 'what works on this host'
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -a profiles -d 'the agent profiles'
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -a shim -d 'the agent shims'
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -a sessions -d 'the recorded sessions'
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -a show -d 'one session in full'
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -a log -d 'network decisions and violations'
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -a rm -d 'forget sessions'
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -a net -d 'answer a --net ask session'"'"'s questions'
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -a ps -d 'the jails running now'
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -a exec -d 'a shell or command inside a running jail'
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -a stop -d 'end a running session'
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -a quarantine -d 'what the jail moved aside'
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -a resume -d 'run a session again'
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -a diff -d 'a review session\'s pending changes'
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -a apply -d 'apply a review session\'s changes'
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -a discard -d 'throw a review session\'s changes away'
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -a checkpoint -d 'snapshot a review session\'s changes'
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -a rollback -d 'back to a checkpoint'
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -a tui -d 'the session manager'
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -a cache -d 'the private package caches, per workspace'
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -a home -d "a workspace's persisted home"
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -a config -d 'the effective configuration'
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -a trust -d 'trust a project file'
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -a untrust -d 'forget a trusted project file'
complete -c agentjail -n "not __fish_seen_subcommand_from $__aj_cmds (__agentjail_profiles)" -a '(__agentjail_profiles)' -d 'run an agent in a jail'

# POLICY options: run, verify and the agents
set -l __aj_pol "__fish_seen_subcommand_from run verify (__agentjail_profiles); and not contains -- -- (commandline -opc)"
complete -c agentjail -n $__aj_pol -l fs -x -a 'read-only workspace-write review danger-full-access ro rw full' -d 'filesystem mode'
complete -c agentjail -n $__aj_pol -l net -x -a 'off on allow ask' -d network
complete -c agentjail -n $__aj_pol -l ask-timeout -x -d '--net ask: seconds before a question is denied'
complete -c agentjail -n $__aj_pol -l allow-domain -x -d 'allow a domain (--net allow)'
complete -c agentjail -n $__aj_pol -l deny-domain -x -d 'refuse a domain'
complete -c agentjail -n $__aj_pol -l map-host -x -d 'NAME=ADDR'
complete -c agentjail -n $__aj_pol -l publish -x -d '[HOSTPORT:]PORT on the host 127.0.0.1'
complete -c agentjail -n $__aj_pol -l allow-http -x -d "'METHOD HOST/PATH': only such requests to HOST"
complete -c agentjail -n $__aj_pol -l ssh-agent -d 'an ssh agent that signs for allowed hosts only'
complete -c agentjail -n $__aj_pol -l gpg-agent -d "gpg-agent's restricted socket, the public keyring"
complete -c agentjail -n $__aj_pol -l workspace -x -a '(__fish_complete_directories)' -d 'the project'
complete -c agentjail -n $__aj_pol -l rw -r -F -d 'extra writable path'
complete -c agentjail -n $__aj_pol -l ro -r -F -d 'extra read-only path'
complete -c agentjail -n $__aj_pol -l hide -r -F -d 'masked path'
complete -c agentjail -n $__aj_pol -l dev -r -F -d 'a character device'
complete -c agentjail -n $__aj_pol -l env -x -a '(set -nx)' -d 'pass a variable'
complete -c agentjail -n $__aj_pol -l allow-ptrace -d 'let debuggers work inside'
complete -c agentjail -n $__aj_pol -l agent-writable-instructions -d 'agents: instruction files writable'
complete -c agentjail -n $__aj_pol -l memory -x -a 'unlimited 512M 1G 4G 8G 16G' -d 'memory limit'
complete -c agentjail -n $__aj_pol -l pids -x -a 'unlimited 1024 4096' -d 'process limit'
complete -c agentjail -n $__aj_pol -l home -x -a 'tmp persist' -d "\$HOME: empty each run, or the workspace's kept one"
complete -c agentjail -n $__aj_pol -l dry-run -d 'print the jail, run nothing'
complete -c agentjail -n $__aj_pol -l quiet -d 'no start and end lines'
complete -c agentjail -n '__fish_seen_subcommand_from run; and not contains -- -- (commandline -opc)' -l backend -x -a 'local landlock opensandbox' -d 'where it runs'
complete -c agentjail -n '__fish_seen_subcommand_from verify' -l backend -x -a 'local landlock' -d 'the jail the battery proves'
complete -c agentjail -n '__fish_seen_subcommand_from run; and contains -- -- (commandline -opc)' -F -a '(__fish_complete_subcommand --fcs-skip=3)'
complete -c agentjail -n '__fish_seen_subcommand_from verify doctor profiles sessions show config' -l json -d 'JSON output'
complete -c agentjail -n '__fish_seen_subcommand_from profiles' -x -a '(__agentjail_profiles)'
complete -c agentjail -n '__fish_seen_subcommand_from shim; and not __fish_seen_subcommand_from install remove status' -x -a 'install remove status'
complete -c agentjail -n '__fish_seen_subcommand_from shim' -l dir -x -a '(__fish_complete_directories)' -d 'shim directory'
complete -c agentjail -n '__fish_seen_subcommand_from install remove' -x -a '(__agentjail_profiles)'
complete -c agentjail -n '__fish_seen_subcommand_from sessions' -l all -d 'every workspace'
complete -c agentjail -n '__fish_seen_subcommand_from show log rm resume exec stop diff apply discard checkpoint rollback' -x -a '(__agentjail_sessions)' -d session
complete -c agentjail -n '__fish_seen_subcommand_from ps' -l json -d JSON
complete -c agentjail -n '__fish_seen_subcommand_from log resume diff apply discard checkpoint rollback' -l last -d 'the newest session'
complete -c agentjail -n '__fish_seen_subcommand_from diff' -l stat -d 'one line per change'
complete -c agentjail -n '__fish_seen_subcommand_from diff' -l json -d 'one JSON document'
complete -c agentjail -n '__fish_seen_subcommand_from apply' -l force -d 'over what changed since'
complete -c agentjail -n '__fish_seen_subcommand_from apply' -l expect -r -d 'only the change set a diff showed'
complete -c agentjail -n '__fish_seen_subcommand_from checkpoint' -l list -d 'the checkpoints'
complete -c agentjail -n '__fish_seen_subcommand_from log' -l json -d 'one object per line'
complete -c agentjail -n '__fish_seen_subcommand_from log' -l follow -d 'keep printing until it ends'
complete -c agentjail -n '__fish_seen_subcommand_from log' -l suggest -d 'the lines that would allow what was denied'
complete -c agentjail -n '__fish_seen_subcommand_from log' -l apply -d 'add them to your configuration, after asking'
complete -c agentjail -n '__fish_seen_subcommand_from log' -l yes -d 'without asking'
complete -c agentjail -n '__fish_seen_subcommand_from resume' -l dry-run -d 'print the jail only'
complete -c agentjail -n '__fish_seen_subcommand_from resume' -l quiet -d 'no line saying what runs again'
complete -c agentjail -n '__fish_seen_subcommand_from quarantine; and not __fish_seen_subcommand_from restore' -x -a 'restore (__agentjail_sessions)'
complete -c agentjail -n '__fish_seen_subcommand_from quarantine; and not __fish_seen_subcommand_from restore' -l all -d 'every workspace'
complete -c agentjail -n '__fish_seen_subcommand_from quarantine; and __fish_seen_subcommand_from restore' -F
complete -c agentjail -n '__fish_seen_subcommand_from quarantine; and __fish_seen_subcommand_from restore' -l yes -d 'without asking'
complete -c agentjail -n '__fish_seen_subcommand_from cache; and not __fish_seen_subcommand_from size clean' -x -a 'size clean'
complete -c agentjail -n '__fish_seen_subcommand_from cache; and __fish_seen_subcommand_from clean' -l all -d 'every cache'
complete -c agentjail -n '__fish_seen_subcommand_from cache; and __fish_seen_subcommand_from clean' -l workspace -x -a '(__fish_complete_directories)' -d "that workspace's caches"
complete -c agentjail -n '__fish_seen_subcommand_from home' -x -a 'clean (__agentjail_sessions)'
complete -c agentjail -n '__fish_seen_subcommand_from home' -l all -d 'every persisted home'
complete -c agentjail -n '__fish_seen_subcommand_from home' -l workspace -x -a '(__fish_complete_directories)' -d "that workspace's home"
complete -c agentjail -n '__fish_seen_subcommand_from config' -l path -d 'the files considered'
complete -c agentjail -n '__fish_seen_subcommand_from trust' -l list -d 'the trusted project files'
complete -c agentjail -n '__fish_seen_subcommand_from trust untrust' -x -a '(__fish_complete_directories)'
complete -c agentjail -n '__fish_seen_subcommand_from net; and not __fish_seen_subcommand_from questions allow deny' -x -a 'questions allow deny'
complete -c agentjail -n '__fish_seen_subcommand_from net; and __fish_seen_subcommand_from questions allow deny' -x -a '(__agentjail_sessions)'
complete -c agentjail -n '__fish_seen_subcommand_from net' -l once -d 'only what waits now'
complete -c agentjail -n '__fish_seen_subcommand_from net' -l always -d 'also add it to your configuration'
