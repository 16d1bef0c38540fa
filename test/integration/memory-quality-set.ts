/**
 * A small labelled set for memory search quality: memories about four people, and questions with
 * the memories that should come first. Written by hand for the test; the wording of the queries
 * deliberately differs from the memories (plurals, verb forms, question words, other words).
 */
export interface LabelledMemory {
  id: string;
  userId: string;
  text: string;
  topic: string;
}

export const MEMORIES: LabelledMemory[] = [
  // alice
  { id: 'a-coffee', userId: 'alice', topic: 'food', text: 'Alice drinks two cups of black coffee every morning' },
  { id: 'a-vegetarian', userId: 'alice', topic: 'food', text: 'Alice has been vegetarian since 2015 and avoids fish too' },
  { id: 'a-peanut', userId: 'alice', topic: 'health', text: 'Alice is severely allergic to peanuts' },
  { id: 'a-marathon', userId: 'alice', topic: 'hobby', text: 'Alice is training for the Berlin marathon in September' },
  { id: 'a-job', userId: 'alice', topic: 'work', text: 'Alice works as a data engineer at a logistics company' },
  { id: 'a-python', userId: 'alice', topic: 'work', text: 'Alice prefers Python over Java for scripting tasks' },
  { id: 'a-sister', userId: 'alice', topic: 'family', text: 'Alice has a younger sister called Maya who studies medicine' },
  { id: 'a-cat', userId: 'alice', topic: 'family', text: 'Alice owns a grey cat named Pixel' },
  { id: 'a-japan', userId: 'alice', topic: 'travel', text: 'Alice visited Japan last spring and loved Kyoto temples' },
  { id: 'a-window', userId: 'alice', topic: 'travel', text: 'Alice always asks for a window seat when flying' },
  { id: 'a-piano', userId: 'alice', topic: 'hobby', text: 'Alice plays the piano on weekends' },
  { id: 'a-birthday', userId: 'alice', topic: 'family', text: "Alice's birthday is on March 3rd" },
  // bob
  { id: 'b-tea', userId: 'bob', topic: 'food', text: 'Bob dislikes coffee and drinks green tea instead' },
  { id: 'b-spicy', userId: 'bob', topic: 'food', text: 'Bob loves spicy Thai and Sichuan food' },
  { id: 'b-lactose', userId: 'bob', topic: 'health', text: 'Bob is lactose intolerant, so no milk or cheese' },
  { id: 'b-knee', userId: 'bob', topic: 'health', text: 'Bob injured his left knee playing football in 2021' },
  { id: 'b-teacher', userId: 'bob', topic: 'work', text: 'Bob teaches history at a secondary school in Leeds' },
  { id: 'b-kids', userId: 'bob', topic: 'family', text: 'Bob has two children, Sam and Lily, aged 7 and 10' },
  { id: 'b-wife', userId: 'bob', topic: 'family', text: "Bob's wife Priya is a nurse working night shifts" },
  { id: 'b-camping', userId: 'bob', topic: 'travel', text: 'Bob goes camping in the Scottish Highlands every summer' },
  { id: 'b-train', userId: 'bob', topic: 'travel', text: 'Bob hates flying and prefers travelling by train' },
  { id: 'b-chess', userId: 'bob', topic: 'hobby', text: 'Bob plays chess online most evenings' },
  { id: 'b-guitar', userId: 'bob', topic: 'hobby', text: 'Bob is learning to play the guitar' },
  { id: 'b-car', userId: 'bob', topic: 'other', text: 'Bob drives an old blue Volvo estate' },
  // chen
  { id: 'c-sushi', userId: 'chen', topic: 'food', text: 'Chen loves sushi, especially salmon nigiri' },
  { id: 'c-gluten', userId: 'chen', topic: 'health', text: 'Chen follows a gluten free diet because of coeliac disease' },
  { id: 'c-startup', userId: 'chen', topic: 'work', text: 'Chen founded a startup building accounting software' },
  { id: 'c-meetings', userId: 'chen', topic: 'work', text: 'Chen prefers meetings before noon and no calls on Fridays' },
  { id: 'c-parents', userId: 'chen', topic: 'family', text: 'Chen visits his parents in Shanghai every Lunar New Year' },
  { id: 'c-dog', userId: 'chen', topic: 'family', text: 'Chen adopted a rescue dog called Mango' },
  { id: 'c-climbing', userId: 'chen', topic: 'hobby', text: 'Chen goes rock climbing at the indoor gym twice a week' },
  { id: 'c-photo', userId: 'chen', topic: 'hobby', text: 'Chen takes film photographs with a Leica camera' },
  { id: 'c-iceland', userId: 'chen', topic: 'travel', text: 'Chen is planning a road trip around Iceland in July' },
  { id: 'c-hotel', userId: 'chen', topic: 'travel', text: 'Chen books quiet hotel rooms away from the elevator' },
  { id: 'c-languages', userId: 'chen', topic: 'other', text: 'Chen speaks Mandarin, English and some German' },
  { id: 'c-sleep', userId: 'chen', topic: 'health', text: 'Chen struggles with insomnia and avoids caffeine after lunch' },
  // dana
  { id: 'd-wine', userId: 'dana', topic: 'food', text: 'Dana enjoys red wine from Rioja with dinner' },
  { id: 'd-baking', userId: 'dana', topic: 'hobby', text: 'Dana bakes sourdough bread every Sunday' },
  { id: 'd-diabetes', userId: 'dana', topic: 'health', text: 'Dana has type 1 diabetes and carries insulin' },
  { id: 'd-lawyer', userId: 'dana', topic: 'work', text: 'Dana is a lawyer specialising in employment law' },
  { id: 'd-remote', userId: 'dana', topic: 'work', text: 'Dana works remotely from Lisbon three days a week' },
  { id: 'd-twins', userId: 'dana', topic: 'family', text: 'Dana is expecting twins in December' },
  { id: 'd-husband', userId: 'dana', topic: 'family', text: "Dana's husband Marco is a chef at an Italian restaurant" },
  { id: 'd-sailing', userId: 'dana', topic: 'hobby', text: 'Dana goes sailing on the Tagus river' },
  { id: 'd-greece', userId: 'dana', topic: 'travel', text: 'Dana spent her honeymoon on the Greek islands' },
  { id: 'd-aisle', userId: 'dana', topic: 'travel', text: 'Dana wants an aisle seat on long flights' },
  { id: 'd-books', userId: 'dana', topic: 'hobby', text: 'Dana reads crime novels, mostly Scandinavian authors' },
  { id: 'd-garden', userId: 'dana', topic: 'other', text: 'Dana grows tomatoes and herbs on her balcony' },
];

export interface LabelledQuery {
  query: string;
  /** Scope of the search; absent: every memory of the tenant. */
  userId?: string;
  relevant: string[];
}

export const QUERIES: LabelledQuery[] = [
  { query: 'What does Alice drink in the morning?', userId: 'alice', relevant: ['a-coffee'] },
  { query: 'food allergies', userId: 'alice', relevant: ['a-peanut'] },
  { query: 'Does Alice eat meat or fish?', userId: 'alice', relevant: ['a-vegetarian'] },
  { query: 'which seat does she want when she flies', userId: 'alice', relevant: ['a-window'] },
  { query: 'Who drinks coffee or tea?', relevant: ['a-coffee', 'b-tea'] },
  { query: 'children and kids', userId: 'bob', relevant: ['b-kids'] },
  { query: 'How does Bob like to travel?', userId: 'bob', relevant: ['b-train', 'b-camping'] },
  { query: 'pets: cats and dogs', relevant: ['a-cat', 'c-dog'] },
  { query: 'dietary restrictions milk gluten', relevant: ['b-lactose', 'c-gluten'] },
  { query: 'when does Chen prefer to have meetings', userId: 'chen', relevant: ['c-meetings'] },
  { query: 'trouble sleeping', userId: 'chen', relevant: ['c-sleep'] },
  { query: 'aisle or window seats on flights', relevant: ['a-window', 'd-aisle'] },
  { query: "Dana's job as a lawyer", userId: 'dana', relevant: ['d-lawyer'] },
  { query: 'baking bread', relevant: ['d-baking'] },
];

/** Mean over queries of (relevant found in the top k) / (relevant). */
export function recallAtK(rankings: string[][], queries: LabelledQuery[], k: number): number {
  const recalls = queries.map((q, i) => q.relevant.filter((id) => rankings[i].slice(0, k).includes(id)).length / q.relevant.length);
  return recalls.reduce((a, b) => a + b, 0) / recalls.length;
}
