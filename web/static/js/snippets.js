// What the Connect page hands a developer: the connection string and a
// client for each SDK, ready to paste. DOM-free, so the node suite
// checks the text.
//
// Every SDK talks to Ebb in gateway mode (HTTPS/HTTP to the endpoint);
// the .NET and Java SDKs default to direct mode, so their snippets ask
// for the gateway. Over TLS each snippet says how to trust the server's
// certificate (emulator.pem, which the page links to).

/** connectionString is the form the .NET SDK and the page's own connect
 * form take. */
export function connectionString(endpoint, key) {
  return `AccountEndpoint=${endpoint};AccountKey=${key};`;
}

/** str writes a string literal; JSON's quoting is valid Go, JavaScript,
 * Python, C# and Java for the text an endpoint or key holds. */
const str = (s) => JSON.stringify(s);

/**
 * snippets returns [{id, name, package, code}], one per SDK, for a
 * server at endpoint with this key (the page passes a placeholder while
 * the key is hidden). tls says the endpoint is https.
 */
export function snippets(endpoint, key, { tls = false } = {}) {
  const trust = (line) => (tls ? [line] : []);
  const lines = (...parts) => parts.flat().join("\n");
  return [
    {
      id: "go",
      name: "Go",
      package: "github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos",
      code: lines(
        trust("// Trust the server's certificate: SSL_CERT_FILE=emulator.pem go run ."),
        `cred, err := azcosmos.NewKeyCredential(${str(key)})`,
        "if err != nil {",
        "\tlog.Fatal(err)",
        "}",
        `client, err := azcosmos.NewClientWithKey(${str(endpoint)}, cred, nil)`,
        "if err != nil {",
        "\tlog.Fatal(err)",
        "}",
      ),
    },
    {
      id: "javascript",
      name: "JavaScript",
      package: "@azure/cosmos",
      code: lines(
        trust("// Trust the server's certificate: NODE_EXTRA_CA_CERTS=emulator.pem node app.js"),
        'import { CosmosClient } from "@azure/cosmos";',
        "",
        `const client = new CosmosClient({ endpoint: ${str(endpoint)}, key: ${str(key)} });`,
      ),
    },
    {
      id: "python",
      name: "Python",
      package: "azure-cosmos",
      code: lines(
        "from azure.cosmos import CosmosClient",
        "",
        tls ? `client = CosmosClient(${str(endpoint)}, credential=${str(key)}, connection_verify="emulator.pem")` : `client = CosmosClient(${str(endpoint)}, credential=${str(key)})`,
      ),
    },
    {
      id: "dotnet",
      name: ".NET",
      package: "Microsoft.Azure.Cosmos",
      code: lines(
        "using Microsoft.Azure.Cosmos;",
        "",
        trust("// Trust the server's certificate: add emulator.pem to the system's trusted certificates."),
        "var client = new CosmosClient(",
        `    ${str(connectionString(endpoint, key))},`,
        "    new CosmosClientOptions { ConnectionMode = ConnectionMode.Gateway });",
      ),
    },
    {
      id: "java",
      name: "Java",
      package: "com.azure:azure-cosmos",
      code: lines(
        "import com.azure.cosmos.CosmosClient;",
        "import com.azure.cosmos.CosmosClientBuilder;",
        "",
        trust("// Trust the server's certificate: keytool -importcert -cacerts -alias ebb -file emulator.pem"),
        "CosmosClient client = new CosmosClientBuilder()",
        `    .endpoint(${str(endpoint)})`,
        `    .key(${str(key)})`,
        "    .gatewayMode()",
        "    .buildClient();",
      ),
    },
  ];
}
