// The official OpenSandbox JS SDK against the stand-in (tests/standin/opensandbox.py): create,
// command (streamed, exit status), upload, download (and its 404), delete. It checks that the
// stand-in speaks the real wire format, not only agentjail's reading of it.
// usage: node sdk_scenario.mjs SDK_DIR HOST:PORT API_KEY     (prints "ok STEP" lines)
import { pathToFileURL } from "node:url";
import path from "node:path";

const [sdkDir, domain, apiKey] = process.argv.slice(2);
const sdk = await import(pathToFileURL(path.join(sdkDir,
  "node_modules/@alibaba-group/opensandbox/dist/index.js")).href);
const { ConnectionConfig, Sandbox } = sdk;

function check(cond, what) {
  if (!cond) { console.log(`not ok ${what}`); process.exitCode = 1; throw new Error(what); }
  console.log(`ok ${what}`);
}

const config = new ConnectionConfig({ domain, apiKey, requestTimeoutSeconds: 30 });
const sbx = await Sandbox.create({ connectionConfig: config, image: "debian:12",
  entrypoint: ["sleep", "infinity"], timeoutSeconds: 600, readyTimeoutSeconds: 20,
  healthCheckPollingInterval: 200 });
check(!!sbx.id, "create (waited for Running, execd pinged)");
const info = await sbx.getInfo();
check(info.status.state === "Running", "getInfo state Running");

const out = [];
const ex = await sbx.commands.run("echo one; echo; echo two >&2; exit 0", undefined,
  { onStdout: (m) => out.push(m.text) });
check(out.join("|") === "one|\n", `stdout streamed (${JSON.stringify(out)})`);
check(ex.logs.stderr.map((m) => m.text).join("|") === "two", "stderr");
check(!ex.error, "execution_complete, no error");
const bad = await sbx.commands.run("exit 7");
check(bad.error && bad.error.name === "CommandExecError" && bad.error.value === "7",
  `error event with exit code (${JSON.stringify(bad.error)})`);

await sbx.files.writeFiles([{ path: "/work/dir/hello.txt", data: "Hello\n", mode: 640 }]);
check(true, "upload (metadata part with filename=, mode 640)");
const got = await sbx.files.readFile("/work/dir/hello.txt");
check(got === "Hello\n", "download");
const st = await sbx.commands.run("stat -c %a work/dir/hello.txt");
check(st.logs.stdout[0]?.text === "640", `mode read as octal digits (${st.logs.stdout[0]?.text})`);
let missing = null;
try { await sbx.files.readFile("/work/nope"); } catch (e) { missing = e; }
check(missing && (missing.statusCode === 404 || String(missing.error?.code) === "FILE_NOT_FOUND"),
  "download of a missing file is 404");

await sbx.kill();
let gone = null;
try { await sbx.getInfo(); } catch (e) { gone = e; }
check(gone && gone.statusCode === 404, "delete, then 404");

const wrong = new ConnectionConfig({ domain, apiKey: apiKey + "x" });
let denied = null;
try { await Sandbox.create({ connectionConfig: wrong, image: "debian:12", skipHealthCheck: true }); }
catch (e) { denied = e; }
check(denied && denied.statusCode === 401 && denied.error?.code === "INVALID_API_KEY",
  `wrong key: 401 INVALID_API_KEY (${denied && denied.error?.code})`);
await sbx.close?.();
